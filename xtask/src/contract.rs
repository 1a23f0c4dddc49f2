//! `cargo xtask contract`: checks the running service against its own OpenAPI document with
//! schemathesis. Starts the contract host (`tests/src/bin/contract_host.rs`: license server,
//! licensed host in paper mode, the template plugin), then lets schemathesis generate requests
//! from `GET /api/openapi.json` and run every check (`--checks all`): no 5xx, every status and
//! body documented, schema-valid requests accepted, schema-invalid ones refused, 405 with an
//! `Allow` header for undocumented methods, and the rest. Any failure fails the command.
//!
//! schemathesis lives in the Python tools' virtual environment under `target/xtask-venv`
//! (see `venv`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::children::Guard;
use crate::{cargo, http, path_str, plugins, venv, workspace_root};

/// Fixed, so that a run is reproducible: the same requests for the same document.
const SEED: &str = "1";
/// Test cases per operation and phase. 50 keeps the step under a minute (100 took 108 s of
/// the 30-minute budget of `cargo xtask test`); with the fixed seed, the same cases run on
/// every machine (5006 cases over the 70 operations on 2026-11-25).
const MAX_EXAMPLES: &str = "50";
/// Statuses schemathesis accepts for schema-valid requests by default (its
/// `positive_data_acceptance` check); an operation's `x-valid-input-statuses` add to these.
const POSITIVE_DEFAULT: &[&str] = &["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"];
/// The operation extension the host documents state-dependent answers with (see
/// `host/src/api/error.rs`).
const VALID_INPUT_STATUSES: &str = "x-valid-input-statuses";

/// `cargo xtask contract`: builds the plugins and the contract host, then checks.
pub fn run() -> anyhow::Result<()> {
    plugins::build_all()?;
    cargo(&["build", "--package", "spotbot-tests", "--bin", "contract_host"])?;
    check()
}

/// The contract check on already built plugins and contract host (`cargo xtask test` builds
/// them first: `cargo test --workspace` builds the binaries of every package with integration
/// tests, and a `cargo build` after it would compile again with other features).
pub fn check() -> anyhow::Result<()> {
    let started = Instant::now();
    let target = plugins::target_dir()?;
    let schemathesis = venv::ensure()?.join("schemathesis");

    let mut command = Command::new(target.join("debug").join("contract_host"));
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).current_dir(workspace_root());
    if std::env::var_os("RUST_LOG").is_none() {
        command.env("RUST_LOG", "warn");
    }
    let mut host = Guard(command.spawn().context("cannot start the contract host")?);
    let (base_url, token) = read_base_url(&mut host.0)?;
    println!("contract host: {base_url}");

    let work = target.join("schemathesis");
    std::fs::create_dir_all(&work)?;
    let config = work.join("schemathesis.toml");
    let openapi = fetch_document(&base_url)?;
    let authorization = format!("Authorization: Bearer {token}");
    check_refs(&openapi)?;
    std::fs::write(&config, schemathesis_config(&openapi)?)?;
    let junit = work.join("junit.xml");

    let document = format!("{base_url}/api/openapi.json");
    let args = [
        "--config-file",
        path_str(&config)?,
        "run",
        &document,
        "--url",
        &base_url,
        // The API requires tokens: every request carries the boss's admin token (schemathesis
        // also sends requests without it and expects them refused), and every request the JSON
        // media type, which the API requires of every POST.
        "--header",
        &authorization,
        "--header",
        "Content-Type: application/json",
        "--checks",
        "all",
        "--seed",
        SEED,
        "--max-examples",
        MAX_EXAMPLES,
        "--generation-database",
        "none",
        "--no-color",
        "--report",
        "junit",
        "--report-junit-path",
        path_str(&junit)?,
    ];
    let shown = args.join(" ").replace(&token, "<token>");
    println!("$ schemathesis {shown}");
    // Run inside target/schemathesis, so nothing schemathesis or hypothesis writes lands in the
    // work tree.
    let status = Command::new(&schemathesis)
        .args(args)
        .current_dir(&work)
        .status()
        .context("cannot run schemathesis")?;
    drop(host);
    if !status.success() {
        bail!(
            "schemathesis found contract failures ({status}); the report above names each \
             request, and {} has the JUnit report",
            junit.display()
        );
    }
    println!("contract check passed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Reads `TOKEN=...` and `BASE_URL=...` from the host's stdout, then keeps draining it on a
/// thread.
fn read_base_url(host: &mut Child) -> anyhow::Result<(String, String)> {
    let stdout = host.stdout.take().context("contract host stdout")?;
    let mut lines = BufReader::new(stdout);
    let mut line = String::new();
    let mut token = None;
    loop {
        line.clear();
        if lines.read_line(&mut line)? == 0 {
            let status = host.wait()?;
            bail!("the contract host exited ({status}) before printing BASE_URL");
        }
        if let Some(found) = line.trim().strip_prefix("TOKEN=") {
            token = Some(found.to_string());
            continue;
        }
        if let Some(url) = line.trim().strip_prefix("BASE_URL=") {
            let url = url.trim_end_matches('/').to_string();
            std::thread::spawn(move || {
                for line in lines.lines().map_while(Result::ok) {
                    println!("contract host: {line}");
                }
            });
            let token = token.context("the contract host printed no TOKEN= line")?;
            return Ok((url, token));
        }
        print!("contract host: {line}");
    }
}

fn fetch_document(base_url: &str) -> anyhow::Result<serde_json::Value> {
    let addr = base_url.strip_prefix("http://").context("the base URL is not http://")?;
    let (status, body) = http::request(addr, "GET", "/api/openapi.json", None)?;
    if status != 200 {
        bail!("GET /api/openapi.json answered {status}");
    }
    serde_json::from_str(&body).context("the OpenAPI document is not JSON")
}

/// Every `$ref` of the document names a schema it defines (utoipa registers the schemas of
/// bodies and responses, not those only parameters use; those go into `ApiDoc`'s components).
fn check_refs(document: &serde_json::Value) -> anyhow::Result<()> {
    fn walk<'a>(value: &'a serde_json::Value, refs: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(target)) = map.get("$ref") {
                    refs.push(target);
                }
                map.values().for_each(|v| walk(v, refs));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, refs)),
            _ => {}
        }
    }
    let mut refs = Vec::new();
    walk(document, &mut refs);
    let mut missing: Vec<&str> = refs
        .into_iter()
        .filter(|target| match target.strip_prefix('#') {
            Some(pointer) => document.pointer(pointer).is_none(),
            None => true,
        })
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if !missing.is_empty() {
        bail!(
            "the OpenAPI document refers to undefined schemas: {} (register them in ApiDoc's \
             components, host/src/api/mod.rs)",
            missing.join(", ")
        );
    }
    Ok(())
}

/// The schemathesis config: per operation that declares `x-valid-input-statuses`, those
/// statuses are also accepted for schema-valid requests (`positive_data_acceptance`), and a
/// declared 5xx is not a server error (`not_a_server_error`). Every declared status must be
/// documented in the operation's responses. An operation that streams server-sent events gets
/// a short request timeout (see [`streams_endlessly`]).
fn schemathesis_config(document: &serde_json::Value) -> anyhow::Result<String> {
    let quoted =
        |items: &[String]| items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
    let mut config = String::from(
        "# Generated by `cargo xtask contract` from the operations' x-valid-input-statuses.\n",
    );
    let paths = document["paths"].as_object().context("the document has no paths")?;
    for (path, item) in paths {
        let Some(item) = item.as_object() else { continue };
        for (method, operation) in item {
            let label = format!("{} {path}", method.to_uppercase());
            if streams_endlessly(operation) {
                // schemathesis validates each event against the per-event schema of the
                // `text/event-stream` response while it reads; the stream never ends, so each
                // example ends at this timeout instead of the default one.
                config.push_str(&format!(
                    "\n[[operations]]\ninclude-name = {label:?}\nrequest-timeout = {STREAM_READ_S}\n"
                ));
                continue;
            }
            let Some(declared) = operation.get(VALID_INPUT_STATUSES) else { continue };
            let declared: Vec<String> = declared
                .as_array()
                .with_context(|| format!("{method} {path}: {VALID_INPUT_STATUSES} is not a list"))?
                .iter()
                .map(|status| match status {
                    serde_json::Value::Number(n) => n.to_string(),
                    other => other.as_str().unwrap_or_default().to_string(),
                })
                .collect();
            for status in &declared {
                if operation["responses"].get(status).is_none() {
                    bail!(
                        "{} {path} declares {status} in {VALID_INPUT_STATUSES} but does not \
                         document it in its responses",
                        method.to_uppercase()
                    );
                }
            }
            let mut positive: Vec<String> =
                POSITIVE_DEFAULT.iter().map(|s| s.to_string()).collect();
            positive.extend(declared.iter().cloned());
            // `include-name` ("METHOD /path") selects exactly this operation; separate
            // `include-path` and `include-method` filters would select either (they are OR'ed).
            config.push_str(&format!(
                "\n[[operations]]\ninclude-name = {label:?}\n\
                 checks.positive_data_acceptance.expected-statuses = [{}]\n",
                quoted(&positive),
            ));
            let server_errors: Vec<String> =
                declared.iter().filter(|s| s.starts_with('5')).cloned().collect();
            if !server_errors.is_empty() {
                let mut allowed: Vec<String> = ["2xx", "3xx", "4xx"].map(String::from).to_vec();
                allowed.extend(server_errors);
                config.push_str(&format!(
                    "checks.not_a_server_error.expected-statuses = [{}]\n",
                    quoted(&allowed)
                ));
            }
        }
    }
    Ok(config)
}

/// Seconds schemathesis reads an endless event stream per example (about ten examples).
const STREAM_READ_S: f64 = 2.0;

/// Whether an operation answers with server-sent events (`text/event-stream`), which never end.
fn streams_endlessly(operation: &serde_json::Value) -> bool {
    operation["responses"]["200"]["content"].get("text/event-stream").is_some()
}
