//! The MCP server: lists the catalog's tools and answers a call by dispatching it into the API.

use std::sync::Arc;

use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::catalog::{Catalog, Operation};
use super::dispatch;
use crate::auth::{Caller, Needs};

const INSTRUCTIONS: &str = "spotbot trades crypto spot. Each tool is one operation of its HTTP \
    API (GET /api/openapi.json) and answers {\"status\": <HTTP status>, \"body\": <answer>}. \
    Tools with the destructive hint move money: call them only on the boss's explicit YES. The \
    service checks the license, ev > 25 and confidence >= 8 itself.";

/// One server per request (the transport is stateless); cloning is cheap.
#[derive(Clone)]
pub struct Tools {
    catalog: Arc<Catalog>,
    /// The API router without `/mcp`, with all its layers.
    api: Router,
}

impl Tools {
    pub fn new(catalog: Catalog, api: Router) -> Self {
        Self { catalog: Arc::new(catalog), api }
    }
}

/// The caller the API's auth layer admitted on this `/mcp` request (every request is admitted
/// again: a revoked token fails on its next message). `None` only outside the service.
fn caller_of(context: &RequestContext<RoleServer>) -> Option<Caller> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    parts.extensions.get::<Caller>().cloned()
}

/// Whether `caller` may call `operation` (the auth route table, as over HTTP).
fn may_call(caller: &Caller, operation: &Operation) -> bool {
    let Ok(method) = operation.method.parse::<axum::http::Method>() else {
        return false;
    };
    match crate::auth::needs(&method, &operation.path) {
        Needs::Public => true,
        Needs::Scope(needed) => caller.scope.allows(needed),
    }
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("spotbot", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Only the tools the caller's token may use: an agent is never shown a tool that
        // would answer 403.
        let caller = caller_of(&context);
        let tools = self
            .catalog
            .tools()
            .iter()
            .filter(|tool| {
                let operation = self.catalog.operation(&tool.name);
                caller.as_ref().zip(operation).is_some_and(|(c, op)| may_call(c, op))
            })
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(operation) = self.catalog.operation(&request.name) else {
            let message = format!("unknown tool `{}`; tools/list names them", request.name);
            return Err(ErrorData::invalid_params(message, None));
        };
        let Some(caller) = caller_of(&context) else {
            return Err(ErrorData::invalid_request("the call carries no admitted caller", None));
        };
        tracing::info!(
            tool = %request.name,
            agent = caller.agent.map_or("open access", |a| a.as_str()),
            "MCP tool call"
        );
        let arguments = request.arguments.unwrap_or_default();
        // The call runs as the caller: the API's auth layer checks its scope and agent as it
        // would over HTTP, so a tool the token cannot use answers 403.
        Ok(dispatch::call(&self.api, operation, arguments, caller).await.into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalog.tool(name).cloned()
    }
}
