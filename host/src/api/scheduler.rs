//! `GET /api/scheduler`: the built-in jobs, when they ran and when they run next. Reads only,
//! no license needed.

use axum::Json;
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::scheduler::SchedulerView;
use crate::state::AppState;

/// Every built-in job (`[scheduler]`) with its schedule (cron expression read in `[market]
/// timezone`, and in words), whether it is enabled and running, its last run and result, and
/// its next run computed from the service clock.
#[utoipa::path(get, path = "/api/scheduler", tag = "scheduler",
    responses(
        (status = 200, description = "The jobs", body = SchedulerView),
    ))]
async fn scheduler(State(state): State<AppState>) -> Json<SchedulerView> {
    Json(state.scheduler.view())
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(scheduler))
}
