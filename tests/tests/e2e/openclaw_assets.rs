//! The OpenClaw assets in `examples/openclaw/` (docs/agents.md), checked against the agent
//! platform's rules (cron store format version 1, skill frontmatter, `ANNOUNCE_SKIP`, the
//! sub-agent defaults, the boss's DM binding) and against the service itself: every route a
//! skill, a workspace or a cron job names exists in the OpenAPI document with that method and
//! those query parameters, and `agent=` always names the caller.

use std::path::PathBuf;
use std::str::FromStr;

use serde_json::Value;
use spotbot_tests::TestHost;

/// The agents that run; `ops` is retired and only answers `ANNOUNCE_SKIP`.
const ROLES: [&str; 4] = ["coo", "finance", "scout", "tech"];
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

fn asset(relative: &str) -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/openclaw").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn json_asset(relative: &str) -> Value {
    serde_json::from_str(&asset(relative)).unwrap_or_else(|err| panic!("{relative}: {err}"))
}

/// One API call named in prose: `GET /api/trailing?agent=finance`, also inside backticks,
/// table cells or a curl line (`-X GET "$TRADER_BASE_URL/api/trades"`).
#[derive(Debug)]
struct Call {
    method: String,
    path: String,
    query: Vec<(String, String)>,
}

fn calls(text: &str) -> Vec<Call> {
    let cleaned = text.replace(['`', '|', '(', ')', '"', ','], " ");
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let target = pair[1].trim_start_matches("$TRADER_BASE_URL").trim_end_matches(['.', ':']);
        if !METHODS.contains(&pair[0]) || !target.starts_with("/api/") {
            continue;
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let query = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_string(), v.to_string())
            })
            .collect();
        found.push(Call { method: pair[0].to_lowercase(), path: path.to_string(), query });
    }
    found
}

/// The operation `call` reaches: a `{param}` segment matches anything (`<SYMBOL>` or a real
/// symbol); the template with the most literal segments wins, as in the router.
fn operation<'a>(doc: &'a Value, call: &Call) -> Option<&'a Value> {
    let segments: Vec<&str> = call.path.split('/').collect();
    doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(template, item)| {
            let parts: Vec<&str> = template.split('/').collect();
            let fits = parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(p, s)| p.starts_with('{') || p == s);
            let literal = parts.iter().filter(|p| !p.starts_with('{')).count();
            Some((literal, item.get(&call.method)?)).filter(|_| fits)
        })
        .max_by_key(|(literal, _)| *literal)
        .map(|(_, op)| op)
}

/// Checks that each call exists with its query parameters and that `agent=` is `role` (or,
/// without a role, a name the service accepts).
fn check_calls(doc: &Value, source: &str, text: &str, role: Option<&str>) -> usize {
    let agents = doc["components"]["schemas"]["AgentName"]["enum"].as_array().unwrap();
    let found = calls(text);
    for call in &found {
        let label = format!("{source}: {} {}", call.method.to_uppercase(), call.path);
        let op = operation(doc, call).unwrap_or_else(|| panic!("{label} is not a route"));
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        for (name, value) in &call.query {
            assert!(
                params.iter().any(|p| p["in"] == "query" && p["name"] == name.as_str()),
                "{label} has no query parameter `{name}`"
            );
            if name == "agent" {
                match role {
                    Some(role) => assert_eq!(value, role, "{label}: agent= names the caller"),
                    None => assert!(agents.iter().any(|a| a == value.as_str()), "{label}"),
                }
            }
        }
    }
    found.len()
}

/// The skill's `## Routes for <role>` sections, and the text before and after them.
fn role_sections(skill: &str) -> (Vec<(&str, &str)>, String) {
    let mut sections = Vec::new();
    let mut rest = String::new();
    for (i, chunk) in skill.split("\n## ").enumerate() {
        let role = chunk.strip_prefix("Routes for ").and_then(|c| c.split_whitespace().next());
        match role {
            Some(role) if i > 0 => sections.push((role, chunk)),
            _ => rest.push_str(chunk),
        }
    }
    (sections, rest)
}

#[tokio::test]
async fn every_route_the_assets_name_exists_with_its_query_parameters() {
    let host = TestHost::start("").await;
    let response = host.http.get(host.url("/api/openapi.json")).send().await.unwrap();
    let doc: Value = response.json().await.unwrap();

    let skill = asset("skills/trader-api/SKILL.md");
    let (sections, rest) = role_sections(&skill);
    let roles: Vec<&str> = sections.iter().map(|(role, _)| *role).collect();
    assert_eq!(roles, ROLES, "one route table per agent");
    for (role, text) in sections {
        let count = check_calls(&doc, &format!("SKILL.md ({role})"), text, Some(role));
        assert!(count >= 4, "the {role} table names its routes ({count})");
    }
    check_calls(&doc, "SKILL.md", &rest, None);

    for role in ROLES {
        let text = asset(&format!("workspaces/{role}/AGENTS.md"));
        check_calls(&doc, &format!("workspaces/{role}/AGENTS.md"), &text, Some(role));
    }

    for job in json_asset("cron/jobs.json")["jobs"].as_array().unwrap() {
        let agent = job["agentId"].as_str().unwrap();
        let message = job["payload"]["message"].as_str().unwrap();
        let source = format!("cron job {}", job["name"]);
        assert!(check_calls(&doc, &source, message, Some(agent)) >= 1, "{source} calls a route");
    }
    host.stop().await;
}

#[test]
fn the_cron_store_is_version_1_with_the_specs_schedules() {
    let store = json_asset("cron/jobs.json");
    assert_eq!(store["version"], 1);
    let jobs = store["jobs"].as_array().unwrap();
    let mut ids: Vec<&str> = jobs.iter().map(|j| j["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), jobs.len(), "job ids are unique");

    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/config.toml"))
            .unwrap();
    let config = spotbot::config::Config::parse(&example, "examples/config.toml".as_ref()).unwrap();
    for job in jobs {
        let name = job["name"].as_str().unwrap();
        for field in ["id", "name", "enabled", "createdAtMs", "updatedAtMs", "schedule"] {
            assert!(job.get(field).is_some(), "{name}: `{field}` is required");
        }
        assert!(ROLES.contains(&job["agentId"].as_str().unwrap()), "{name}: a running agent");
        assert_eq!(job["state"], serde_json::json!({}), "{name}: ship an empty state");
        let pair =
            (job["sessionTarget"].as_str().unwrap(), job["payload"]["kind"].as_str().unwrap());
        assert!(
            matches!(pair, ("main", "systemEvent") | ("isolated", "agentTurn")),
            "{name}: sessionTarget and payload.kind must match, got {pair:?}"
        );
        assert!(["now", "next-heartbeat"].contains(&job["wakeMode"].as_str().unwrap()), "{name}");
        let mode = job["delivery"]["mode"].as_str().unwrap();
        assert!(["none", "announce", "webhook"].contains(&mode), "{name}: delivery {mode}");
        let schedule = &job["schedule"];
        match schedule["kind"].as_str().unwrap() {
            "every" => assert!(schedule["everyMs"].as_u64().unwrap() > 0, "{name}"),
            "cron" => {
                let expr = schedule["expr"].as_str().unwrap();
                let fields = expr.split_whitespace().count();
                assert!(fields == 5 || fields == 6, "{name}: `{expr}` has 5 or 6 fields");
                croner::Cron::from_str(expr).unwrap_or_else(|e| panic!("{name}: {expr}: {e}"));
                let tz = schedule["tz"].as_str().unwrap();
                assert_eq!(tz, config.market.timezone, "{name}: the service's [market] timezone");
            }
            other => panic!("{name}: schedule kind {other}"),
        }
    }

    let schedule = |name: &str| {
        let job = jobs.iter().find(|j| j["name"] == name).unwrap_or_else(|| panic!("job {name}"));
        (job["agentId"].as_str().unwrap(), job["schedule"].clone())
    };
    let every = |ms: u64| serde_json::json!({"kind": "every", "everyMs": ms});
    let cron = |expr: &str| serde_json::json!({"kind": "cron", "expr": expr, "tz": "UTC"});
    assert_eq!(schedule("trailing_stop"), ("finance", every(60_000)));
    assert_eq!(schedule("daily_pnl"), ("finance", cron("0 21 * * *")));
    assert_eq!(schedule("pump_scan"), ("scout", cron("*/5 * * * *")));
    assert_eq!(schedule("mr_combined_scan"), ("scout", every(300_000)));
}

#[test]
fn the_skill_has_the_frontmatter_openclaw_reads_and_the_approval_rule() {
    let skill = asset("skills/trader-api/SKILL.md");
    let front = skill.strip_prefix("---\n").and_then(|s| s.split_once("\n---\n")).unwrap().0;
    let key = |name: &str| {
        front
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("frontmatter `{name}`"))
    };
    assert_eq!(key("name"), "trader-api");
    assert!(key("description").len() > 40, "a keyword-rich one-line description");
    // Older OpenClaw parsers read `metadata` only as single-line JSON.
    let metadata: Value = serde_json::from_str(key("metadata")).unwrap();
    assert_eq!(metadata["openclaw"]["requires"]["bins"], serde_json::json!(["curl"]));
    assert_eq!(metadata["openclaw"]["requires"]["env"], serde_json::json!(["TRADER_BASE_URL"]));

    let musts = [
        "1-YES <SYMBOL>",
        "0-NO <SYMBOL>",
        "confirm?signal_id=<ID>",
        "\"ok\": false",
        "?agent=",
        "web_fetch",
    ];
    for must in musts {
        assert!(skill.contains(must), "the skill teaches `{must}`");
    }
    let coo = asset("workspaces/coo/AGENTS.md");
    assert!(coo.contains("Never confirm without that exact YES"), "coo's own instructions");
    assert!(coo.contains("confirm?signal_id=<id>"), "coo confirms the approved signal by its id");
}

#[test]
fn the_retired_ops_agent_answers_exactly_announce_skip() {
    let ops = asset("workspaces/ops/AGENTS.md");
    let last = ops.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(last, "ANNOUNCE_SKIP", "the token alone on its line, nothing after it");
    let config = json_asset("openclaw.json");
    let ops = &config["agents"]["entries"]["ops"];
    assert_eq!(ops["skills"], serde_json::json!([]), "ops gets no skill");
}

#[test]
fn openclaw_json_binds_the_boss_dm_to_coo_with_the_platform_defaults() {
    let config = json_asset("openclaw.json");
    let agents = config["agents"]["entries"].as_object().unwrap();
    let mut ids: Vec<&str> = agents.keys().map(String::as_str).collect();
    ids.sort();
    assert_eq!(ids, ["coo", "finance", "ops", "scout", "tech"]);
    let workspaces: std::collections::HashSet<&str> =
        agents.values().map(|a| a["workspace"].as_str().unwrap()).collect();
    assert_eq!(workspaces.len(), ids.len(), "each agent its own workspace");
    assert_eq!(config["agents"]["defaults"]["skills"], serde_json::json!(["trader-api"]));
    let subagents = &config["agents"]["defaults"]["subagents"];
    assert_eq!(subagents["maxConcurrent"], 8);
    assert_eq!(subagents["archiveAfterMinutes"], 60);

    let telegram = &config["channels"]["telegram"];
    assert_eq!(telegram["dmPolicy"], "allowlist");
    assert!(telegram.get("botToken").is_none(), "the token comes from TELEGRAM_BOT_TOKEN");
    let boss = telegram["allowFrom"].as_array().unwrap();
    assert_eq!(boss.len(), 1, "only the boss");
    let binding = config["bindings"].as_array().unwrap().iter().find(|b| b["agentId"] == "coo");
    let peer = &binding.expect("a binding to coo")["match"]["peer"];
    assert_eq!(peer["kind"], "direct", "a direct chat (`dm` is the retired spelling)");
    assert_eq!(peer["id"], boss[0], "the bound DM is the allowed boss");

    let env = &config["skills"]["entries"]["trader-api"]["env"];
    assert!(env["TRADER_BASE_URL"].as_str().unwrap().starts_with("http://"));
}
