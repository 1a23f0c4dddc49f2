//! Request signing exactly as exchange A documents it: HMAC-SHA256 over the percent-encoded
//! query string concatenated with the body (no separator), hex-encoded, sent as the last
//! parameter `signature`; the key travels in the `X-MBX-APIKEY` header.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::Secret;

/// Builds `name=value&...` exactly as it will be sent (values percent-encoded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    text: String,
}

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, name: &str, value: impl AsRef<str>) -> &mut Self {
        if !self.text.is_empty() {
            self.text.push('&');
        }
        self.text.push_str(name);
        self.text.push('=');
        self.text.extend(form_urlencoded::byte_serialize(value.as_ref().as_bytes()));
        self
    }

    pub fn push_opt(&mut self, name: &str, value: Option<impl AsRef<str>>) -> &mut Self {
        if let Some(v) = value {
            self.push(name, v);
        }
        self
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// HMAC-SHA256 of `payload` under `secret`, lowercase hex.
pub fn hmac_sha256_hex(secret: &str, payload: &str) -> String {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(payload.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// API key and secret of one account. `Debug` never shows either.
#[derive(Clone)]
pub struct Signer {
    api_key: Secret,
    secret: Secret,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(***)")
    }
}

impl Signer {
    pub fn new(api_key: Secret, secret: Secret) -> Self {
        Self { api_key, secret }
    }

    /// The value of the `X-MBX-APIKEY` header.
    pub fn api_key(&self) -> &str {
        self.api_key.expose()
    }

    /// Signature of a request whose query string is `query` and body is `body`.
    pub fn sign(&self, query: &str, body: &str) -> String {
        hmac_sha256_hex(self.secret.expose(), &format!("{query}{body}"))
    }

    /// The signed params of the WebSocket API's `userDataStream.subscribe.signature`: the
    /// payload is every param sorted by name, `name=value` joined with `&`, unencoded.
    pub fn subscription_params(&self, timestamp_ms: i64, recv_window_ms: u64) -> serde_json::Value {
        let payload = format!(
            "apiKey={}&recvWindow={recv_window_ms}&timestamp={timestamp_ms}",
            self.api_key()
        );
        serde_json::json!({
            "apiKey": self.api_key(),
            "recvWindow": recv_window_ms,
            "timestamp": timestamp_ms,
            "signature": hmac_sha256_hex(self.secret.expose(), &payload),
        })
    }

    /// Appends `timestamp`, `recvWindow` and then `signature` (last) to `params`.
    pub fn sign_params(&self, params: &mut Params, timestamp_ms: i64, recv_window_ms: u64) {
        params.push("recvWindow", recv_window_ms.to_string());
        params.push("timestamp", timestamp_ms.to_string());
        let signature = self.sign(params.as_str(), "");
        params.push("signature", signature);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j";
    const KEY: &str = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A";

    fn signer() -> Signer {
        Signer::new(Secret::new(KEY), Secret::new(SECRET))
    }

    #[test]
    fn documented_vector_query_only() {
        let mut p = Params::new();
        p.push("symbol", "LTCBTC")
            .push("side", "BUY")
            .push("type", "LIMIT")
            .push("timeInForce", "GTC")
            .push("quantity", "1")
            .push("price", "0.1");
        p.push("recvWindow", "5000").push("timestamp", "1499827319559");
        assert_eq!(
            signer().sign(p.as_str(), ""),
            "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"
        );
    }

    #[test]
    fn documented_vector_non_ascii_symbol_is_signed_percent_encoded() {
        let mut p = Params::new();
        p.push("symbol", "１２３４５６")
            .push("side", "BUY")
            .push("type", "LIMIT")
            .push("timeInForce", "GTC")
            .push("quantity", "1")
            .push("price", "0.1")
            .push("recvWindow", "5000")
            .push("timestamp", "1499827319559");
        assert!(p.as_str().starts_with("symbol=%EF%BC%91%EF%BC%92"));
        assert_eq!(
            signer().sign(p.as_str(), ""),
            "e1353ec6b14d888f1164ae9af8228a3dbd508bc82eb867db8ab6046442f33ef3"
        );
    }

    #[test]
    fn documented_vector_mixed_query_and_body() {
        assert_eq!(
            signer().sign(
                "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC",
                "quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
            ),
            "0fd168b8ddb4876a0358a8d14d0c9f3da0e9b20c5d52b2a00fcf7d1c602f9a77"
        );
    }

    #[test]
    fn the_subscription_is_signed_over_its_sorted_params() {
        let params = signer().subscription_params(1747385641636, 5000);
        assert_eq!(
            params["signature"],
            "49601ffc5b0122c3c7ee3ea85ef7d6cd76256f5191a57c976418faa32e917653"
        );
        assert_eq!(params["apiKey"], KEY);
    }

    #[test]
    fn signature_is_the_last_parameter_and_secrets_do_not_show() {
        let mut p = Params::new();
        p.push("symbol", "BTCUSDT");
        signer().sign_params(&mut p, 1, 5000);
        assert!(p.as_str().starts_with("symbol=BTCUSDT&recvWindow=5000&timestamp=1&signature="));
        assert_eq!(format!("{:?}", signer()), "Signer(***)");
    }
}
