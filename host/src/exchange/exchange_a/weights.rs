//! The request weight of each exchange A endpoint, as its REST documentation lists it, so the
//! request budget can count a request before it is sent (the exchange's own count arrives only
//! with the answer).

use reqwest::Method;

use super::signer::Params;

/// The weight `method path` with `params` costs. Unknown paths count as the heaviest read.
pub fn weight(method: &Method, path: &str, params: &Params) -> u64 {
    let has = |name: &str| value(params, name).is_some();
    match (method.as_str(), path) {
        ("GET", "/api/v3/ping" | "/api/v3/time") => 1,
        ("GET", "/api/v3/exchangeInfo") => 20,
        ("GET", "/api/v3/klines" | "/api/v3/avgPrice") => 2,
        ("GET", "/api/v3/ticker/24hr") => match (has("symbol"), symbols_listed(params)) {
            (true, _) => 2,
            (false, Some(1..=20)) => 2,
            (false, Some(21..=100)) => 40,
            _ => 80,
        },
        ("GET", "/api/v3/ticker/price") if has("symbol") => 2,
        ("GET", "/api/v3/ticker/price") => 4,
        ("GET", "/api/v3/account") => 20,
        ("GET", "/api/v3/order" | "/api/v3/orderList") => 4,
        ("GET", "/api/v3/openOrders") if has("symbol") => 6,
        ("GET", "/api/v3/openOrders") => 80,
        ("GET", "/api/v3/openOrderList") => 6,
        ("GET", "/api/v3/allOrders" | "/api/v3/allOrderList") => 20,
        ("GET", "/api/v3/myTrades") if has("orderId") => 5,
        ("GET", "/api/v3/myTrades") => 20,
        ("POST" | "DELETE", _) => 1,
        _ => 80,
    }
}

/// True for a request that places an order (counted against the order limits; an OCO counts
/// as one request of the list).
pub fn places_order(method: &Method, path: &str) -> bool {
    method == Method::POST
        && matches!(path, "/api/v3/order" | "/api/v3/orderList/oco" | "/api/v3/order/oco")
}

fn value(params: &Params, name: &str) -> Option<String> {
    form_urlencoded::parse(params.as_str().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// How many symbols a `symbols=["A","B"]` parameter lists.
fn symbols_listed(params: &Params) -> Option<usize> {
    let list: Vec<String> = serde_json::from_str(&value(params, "symbols")?).ok()?;
    Some(list.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for (k, v) in pairs {
            p.push(k, v);
        }
        p
    }

    #[test]
    fn weights_follow_the_documented_table() {
        let get = Method::GET;
        assert_eq!(weight(&get, "/api/v3/ticker/24hr", &Params::new()), 80);
        assert_eq!(weight(&get, "/api/v3/ticker/24hr", &params(&[("symbol", "BTCUSDT")])), 2);
        let three = params(&[("symbols", r#"["A","B","C"]"#)]);
        assert_eq!(weight(&get, "/api/v3/ticker/24hr", &three), 2);
        let many: Vec<String> = (0..30).map(|i| format!("S{i}")).collect();
        let thirty = params(&[("symbols", &serde_json::to_string(&many).unwrap())]);
        assert_eq!(weight(&get, "/api/v3/ticker/24hr", &thirty), 40);
        assert_eq!(weight(&get, "/api/v3/openOrders", &Params::new()), 80);
        assert_eq!(weight(&get, "/api/v3/openOrderList", &Params::new()), 6);
        assert_eq!(weight(&get, "/api/v3/myTrades", &params(&[("orderId", "7")])), 5);
        assert_eq!(weight(&Method::POST, "/api/v3/order", &Params::new()), 1);
        assert!(places_order(&Method::POST, "/api/v3/orderList/oco"));
        assert!(!places_order(&Method::DELETE, "/api/v3/order"));
    }
}
