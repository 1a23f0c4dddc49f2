//! The server's Ed25519 key pair, created on first start and kept in the data directory.
//!
//! `signing.key` holds the 32-byte secret seed as hex (mode 0600 on Unix); `public.key` holds
//! the public key as hex, the value an operator puts into the host's `license.public_key`.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use ed25519_dalek::SigningKey;

/// File name of the secret key inside the data directory.
pub const SECRET_FILE: &str = "signing.key";
/// File name of the public key inside the data directory.
pub const PUBLIC_FILE: &str = "public.key";

/// Loads the key pair from `data_dir`, creating and persisting a new one on first start.
pub fn load_or_create(data_dir: &Path) -> anyhow::Result<SigningKey> {
    let secret_path = data_dir.join(SECRET_FILE);
    let key = if secret_path.exists() {
        let text = fs::read_to_string(&secret_path)
            .with_context(|| format!("reading {}", secret_path.display()))?;
        let seed: [u8; 32] = hex::decode(text.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .with_context(|| format!("{} is not 64 hex characters", secret_path.display()))?;
        SigningKey::from_bytes(&seed)
    } else {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no system randomness: {e}"))?;
        let key = SigningKey::from_bytes(&seed);
        write_secret(&secret_path, &hex::encode(seed))?;
        key
    };
    let public = crate::wire::public_key_hex(&key.verifying_key());
    fs::write(data_dir.join(PUBLIC_FILE), format!("{public}\n"))
        .with_context(|| format!("writing {PUBLIC_FILE}"))?;
    Ok(key)
}

fn write_secret(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_pair_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path()).unwrap();
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(first.to_bytes(), again.to_bytes());
        let public = fs::read_to_string(dir.path().join(PUBLIC_FILE)).unwrap();
        assert_eq!(public.trim(), crate::wire::public_key_hex(&first.verifying_key()));
    }
}
