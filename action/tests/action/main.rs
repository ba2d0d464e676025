//! End-to-end tests of the `navin-action` binary in a simulated Actions job against the fake GitHub.

mod harness;

mod actions;

mod agent_loop;
mod contain;
mod event;
mod evidence;
mod install;
mod journey_action;
mod metadata;
mod other_events;
mod planner;
mod progress;
mod read_modes;
mod release_workflow;
mod rewind;
mod run_sh;
mod stages;
mod startup;
mod third_party;
mod workflow_runner;
