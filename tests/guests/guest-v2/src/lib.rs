//! Sandbox test guest built against `spotbot:strategy@2.0.0`: the host speaks 1.x and must
//! refuse the file with a clear "other major version" error.
wit_bindgen::generate!({ path: "wit", world: "strategy" });

pub struct Guest;

impl exports::spotbot::strategy::plugin::Guest for Guest {
    fn describe() -> String {
        "guest_v2".to_string()
    }
}

#[cfg(target_arch = "wasm32")]
export!(Guest);
