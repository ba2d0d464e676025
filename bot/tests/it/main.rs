//! navin-bot's integration tests, one binary: the real server and engine against the
//! fake GitHub over loopback, the `navin` binary, the queue and its workers.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

mod dashboard_support;
mod engine_support;
mod mcp_support;
mod server_support;
mod world;

mod agents;
mod cli_app_create;
mod cli_config;
mod cli_help;
mod cli_ledger;
mod cli_messages;
mod cli_plan;
mod cli_plan_local;
mod cli_plan_missions;
mod dashboard_access;
mod dashboard_browser;
mod dashboard_deliveries;
mod dashboard_editors;
mod deploy_files;
mod deploy_manifest;
mod engine_agent_loop;
mod engine_codeowners;
mod engine_config_check;
mod engine_dispatch;
mod engine_e2e;
mod engine_edits;
mod engine_evidence;
mod engine_installation;
mod engine_lifecycle;
mod engine_merge;
mod engine_plan_actual;
mod engine_plan_button;
mod engine_plan_edits;
mod engine_plan_files;
mod engine_planner;
mod engine_plans;
mod engine_progress;
mod engine_protection;
mod engine_stages;
mod mcp_crash;
mod mcp_github;
mod mcp_journal;
mod queue_conformance;
mod scenarios;
mod server_binary;
mod server_config;
mod server_crash;
mod server_e2e;
mod server_ingress;
mod server_queue;
mod server_reconcile;
mod server_replicas;
mod server_startup;
