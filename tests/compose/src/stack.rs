//! The operator's `docker-compose.yml`, brought up as its own project: a scratch project
//! folder holds the `config.toml` and `spotbot.env` an operator would write next to the file,
//! and the project name, image tag and network names keep it apart from a real stack on the
//! same machine. Dropping the stack takes it down with its volumes.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::engine::{Engine, output};
use xtask_support::{path_str, workspace_root};

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(500);

pub struct Stack<'a> {
    engine: &'a Engine,
    /// The project folder: `config.toml` and `spotbot.env` live here.
    pub dir: PathBuf,
    pub project: String,
    tag: String,
    /// The operator's admin token, sent by [`Stack::api`] once created.
    pub token: Option<String>,
}

impl<'a> Stack<'a> {
    /// A stack of `docker-compose.yml` named `project`, running image `spotbot:<tag>`.
    pub fn new(engine: &'a Engine, dir: PathBuf, project: &str, tag: &str) -> Self {
        Self { engine, dir, project: project.to_string(), tag: tag.to_string(), token: None }
    }

    /// `docker-compose <args>` for this project.
    pub fn compose(&self, args: &[&str]) -> anyhow::Result<Command> {
        let file = workspace_root().join("docker-compose.yml");
        let mut all = vec![
            "--file",
            path_str(&file)?,
            "--project-directory",
            path_str(&self.dir)?,
            "--project-name",
            &self.project,
        ];
        all.extend(args);
        let mut command = self.engine.compose(&all);
        command.env("SPOTBOT_TAG", &self.tag).env("SPOTBOT_NETWORKS", &self.project);
        Ok(command)
    }

    /// `docker-compose up -d` of `services` (all when empty) from the built image.
    pub fn up(&self, services: &[&str]) -> anyhow::Result<()> {
        let mut args = vec!["up", "--detach", "--no-build"];
        args.extend(services);
        output(self.compose(&args)?.stderr(Stdio::piped())).map(|_| ())
    }

    /// The container id of `service`.
    pub fn container(&self, service: &str) -> anyhow::Result<String> {
        let id = output(&mut self.compose(&["ps", "--all", "--quiet", service])?)?;
        let id = id.trim();
        if id.is_empty() {
            bail!("compose has no container of {service}");
        }
        Ok(id.to_string())
    }

    /// `docker inspect --format <format>` of `service`'s container.
    pub fn inspect(&self, service: &str, format: &str) -> anyhow::Result<String> {
        let id = self.container(service)?;
        Ok(output(&mut self.engine.docker(&["inspect", "--format", format, &id]))?
            .trim()
            .to_string())
    }

    /// Waits until Docker's healthcheck calls `service` healthy; returns how long it took.
    pub fn wait_healthy(&self, service: &str, limit: Duration) -> anyhow::Result<Duration> {
        let started = Instant::now();
        loop {
            let health = self.inspect(service, "{{.State.Health.Status}}")?;
            match health.as_str() {
                "healthy" => return Ok(started.elapsed()),
                "unhealthy" => bail!("{service} turned unhealthy:\n{}", self.logs(service)?),
                _ if started.elapsed() > limit => bail!(
                    "{service} not healthy after {limit:?} ({health}):\n{}",
                    self.logs(service)?
                ),
                _ => std::thread::sleep(POLL),
            }
        }
    }

    /// `docker-compose exec -T <service> <args>`: its standard output.
    pub fn exec(&self, service: &str, args: &[&str]) -> anyhow::Result<String> {
        let mut all = vec!["exec", "-T", service];
        all.extend(args);
        output(&mut self.compose(&all)?)
    }

    /// Calls the service's API from inside its container (the API is published nowhere), as
    /// the operator guide does: the status and the JSON body.
    pub fn api(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> anyhow::Result<(u16, serde_json::Value)> {
        let url = format!("http://127.0.0.1:8000{path}");
        let authorization = self.token.as_ref().map(|t| format!("authorization: Bearer {t}"));
        let mut args = vec!["curl", "-sS", "-X", method, "-w", "\n%{http_code}", &url];
        // The API requires the JSON media type on every POST, a body or not.
        args.extend(["-H", "content-type: application/json"]);
        if let Some(authorization) = &authorization {
            args.extend(["-H", authorization]);
        }
        if let Some(body) = body {
            args.extend(["--data", body]);
        }
        let answer = self.exec("spotbot", &args)?;
        let (body, status) = answer.trim_end().rsplit_once('\n').context("curl's status line")?;
        let status = status.parse().with_context(|| format!("HTTP status {status:?}"))?;
        let body = serde_json::from_str(body)
            .with_context(|| format!("{method} {path}: not JSON: {body}"))?;
        Ok((status, body))
    }

    /// Everything the stack logged.
    pub fn logs(&self, service: &str) -> anyhow::Result<String> {
        output(&mut self.compose(&["logs", "--no-color", service])?)
    }

    /// `docker-compose stop <service>`: how long it took.
    pub fn stop(&self, service: &str) -> anyhow::Result<Duration> {
        let started = Instant::now();
        output(self.compose(&["stop", service])?.stderr(Stdio::piped()))?;
        Ok(started.elapsed())
    }

    /// `docker-compose down`, keeping the volumes (an operator's upgrade or restart).
    pub fn down(&self) -> anyhow::Result<()> {
        output(self.compose(&["down"])?.stderr(Stdio::piped())).map(|_| ())
    }
}

impl Drop for Stack<'_> {
    fn drop(&mut self) {
        if let Ok(mut command) = self.compose(&["down", "--volumes", "--remove-orphans"]) {
            let _ = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
        }
    }
}
