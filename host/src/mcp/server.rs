//! The MCP server: lists the catalog's tools and answers a call by dispatching it into the API.

use std::sync::Arc;

use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::catalog::Catalog;
use super::dispatch;

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

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("spotbot", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.catalog.tools().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(operation) = self.catalog.operation(&request.name) else {
            let message = format!("unknown tool `{}`; tools/list names them", request.name);
            return Err(ErrorData::invalid_params(message, None));
        };
        let arguments = request.arguments.unwrap_or_default();
        Ok(dispatch::call(&self.api, operation, arguments).await.into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalog.tool(name).cloned()
    }
}
