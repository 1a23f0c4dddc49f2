//! One scan call and the checks on its response, and a plugin loaded outside the registry
//! (benchmarks, differential tests, tools).

use std::sync::Arc;

use super::errors::{call_error, describe_failure};
use super::logs::PluginLog;
use super::model::{Manifest, ScanRequest, ScanResponse};
use super::runtime::{Compiled, Runtime};
use super::{LoadError, PluginError, validate};

/// Runs one scan call and checks the response (size cap, fields, symbols); returns what the
/// plugin wrote to stderr meanwhile whatever the outcome.
pub(super) fn run_scan(
    runtime: &Runtime,
    compiled: &Compiled,
    manifest: &Manifest,
    request: ScanRequest,
) -> (Result<ScanResponse, PluginError>, PluginLog) {
    let symbols: std::collections::BTreeSet<String> =
        request.symbols.iter().map(|s| s.symbol.clone()).collect();
    let call = runtime.scan(compiled, request);
    let checked = call
        .result
        .map_err(|f| call_error(f, runtime.limits()))
        .and_then(|answer| answer.map_err(PluginError::Plugin))
        .and_then(|response| {
            let size = super::model::approx_size(&response);
            let cap = runtime.limits().max_result_bytes;
            if size > cap {
                return Err(PluginError::ResultTooLarge { size, cap });
            }
            let symbols = symbols.iter().map(String::as_str).collect();
            validate::response(manifest, &symbols, &response)
                .map_err(PluginError::InvalidResponse)?;
            Ok(response)
        });
    (checked, call.log)
}

/// One plugin loaded from bytes outside the registry, called synchronously (benchmarks,
/// differential tests, tools).
pub struct StandalonePlugin {
    runtime: Arc<Runtime>,
    compiled: Compiled,
    pub manifest: Manifest,
}

impl StandalonePlugin {
    pub fn load(runtime: &Arc<Runtime>, wasm: &[u8]) -> Result<Self, LoadError> {
        let (compiled, _) = runtime.compile(wasm)?;
        let manifest = runtime
            .describe(&compiled)
            .map_err(|f| LoadError::DescribeFailed(describe_failure(&f, runtime.limits())))?;
        validate::manifest(&manifest).map_err(LoadError::InvalidManifest)?;
        Ok(StandalonePlugin { runtime: runtime.clone(), compiled, manifest })
    }

    /// Runs `scan` in a fresh instance (blocking) and checks the response.
    pub fn scan(&self, request: ScanRequest) -> Result<ScanResponse, PluginError> {
        self.scan_logged(request).0
    }

    /// As [`StandalonePlugin::scan`], with the lines the plugin logged.
    pub fn scan_logged(
        &self,
        request: ScanRequest,
    ) -> (Result<ScanResponse, PluginError>, PluginLog) {
        run_scan(&self.runtime, &self.compiled, &self.manifest, request)
    }
}
