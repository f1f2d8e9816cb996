"""Which tests are `slow` and which are `external`, kept in one list instead of in the test files.

The root `conftest.py` marks the tests named here at collection. `bash scripts/test --fast` runs
`-m "not slow and not external"`: the whole suite minus what takes seconds or needs a server.

- `SLOW`: tests that take a second or more on a loaded 2-core machine (`pytest --durations=0`
  finds them): package and docs builds, subprocess and terminal sessions, crash tests that kill
  processes at random points, the fault cases that wait on real timeouts, hypothesis searches.
- `EXTERNAL`: tests that need a server the project's scripts start, beyond those already marked
  `local_llm` or `temporal` (which count as external too).

An entry is a test id as pytest prints it: a file (`tests/test_packaging.py`), a test
(`tests/cli/test_cli.py::test_ctrl_c_stops_a_run`, every parameter of it) or one parameter set
(`...::test_fault[stall_before_every_first_event-*]`); `*` matches any text, `[` is literal.
`tests/test_support.py` checks that every entry still names a test file and function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["EXTERNAL", "SLOW", "matcher"]

_FAULTS = "tests/llm/test_*.py::test_fault"

SLOW = [
    # builds: the sdist and wheel installed into fresh venvs, the docs site with mkdocs
    "tests/test_packaging.py",
    "tests/test_docs_site.py",
    # the provider fault matrix: the cases that wait on real timeouts or send megabytes
    f"{_FAULTS}[stall_before_every_first_event*",
    f"{_FAULTS}[stall_before_the_first_event_then_ok*",
    f"{_FAULTS}[10_mb_of_tool_arguments*",
    f"{_FAULTS}[reset_before_the_response*",
    f"{_FAULTS}[reset_before_the_first_event*",
    "tests/llm/test_edges.py::test_idle_and_request_timeouts_release_everything",
    "tests/llm/test_edges.py::test_timeouts_are_logged_as_warnings",
    "tests/llm/test_edges.py::test_header_secrets_are_redacted_from_error_texts",
    "tests/llm/test_anthropic.py::test_529_overloaded_is_retried_with_backoff",
    # the batch APIs' first request of a file imports the provider SDK (seconds on 2 cores)
    "tests/llm/test_batch.py::test_submit_wait_results_matched_by_id",
    "tests/llm/test_batch_anthropic.py::test_submit_results_by_id_with_partial_failures",
    "tests/llm/test_anthropic.py::test_overloaded_error_event_first_is_retried",
    "tests/llm/test_anthropic.py::test_pings_before_the_first_event_do_not_count_as_one",
    "tests/llm/test_azure.py::test_abort_mid_stream",
    "tests/llm/test_vertex.py::test_abort_mid_stream",
    # hypothesis searches and rechunking sweeps
    "tests/llm/test_google.py::test_rechunking_gives_the_same_message",
    "tests/llm/test_openai_responses.py::test_any_rechunking_gives_the_same_message",
    "tests/llm/test_transform.py::test_alnum_id_map_invariants",
    "tests/llm/test_builder_arguments.py::test_adapters_never_guess_arguments",
    "tests/engine/test_invariants.py::test_G6_invariants_hold_for_random_scripts",
    "tests/test_compaction.py::test_random_runs_keep_every_promise",
    "tests/test_output_property.py::test_partial_never_raises_and_ends_with_the_value",
    "tests/test_tool_values_property.py::test_any_tool_value_keeps_the_session_in_step",
    "tests/sessions/test_storage_edges.py::test_jsonl_every_flipped_bit_is_detected",
    "tests/sessions/test_storage_edges.py::test_whatever_a_tool_returns_disk_equals_memory",
    "tests/sessions/test_storage_edges.py::test_whatever_a_tool_returns_the_next_prompt_works",
    # processes killed at random points, several processes on one store
    "tests/sessions/test_sessions_crash.py",
    "tests/test_approvals_crash.py",
    "tests/sessions/test_sessions.py::test_a_session_held_by_another_process",
    "tests/sessions/test_sessions.py::test_two_processes_writing_one_store_at_once",
    "tests/sessions/test_sessions_postgres.py::test_two_replicas_racing_for_one_session_lose_nothing",
    "tests/sessions/test_sessions_postgres.py::test_a_database_restarted_mid_run_loses_nothing",
    "tests/engine/test_tool_execution_edges.py::test_an_update_while_the_run_is_torn_down_is_dropped",
    "tests/test_agent_threads.py::test_steer_and_follow_up_from_another_thread_lose_and_repeat_nothing",
    "tests/engine/test_loop.py::test_leaving_while_the_run_waits_for_the_consumer_is_clean",
    "tests/engine/test_loop_regressions.py::test_an_agent_loop_stream_dropped_by_its_reader_stops_its_run",
    # a fresh interpreter per test: import checks, the command line, a terminal (pty)
    "tests/test_public_api.py::test_import_does_not_pull_in_provider_sdks",
    "tests/tracing/test_spans.py::test_the_core_never_imports_tracing_or_opentelemetry",
    "tests/llm/test_catalogue.py::test_the_checked_in_catalogue_is_the_generator_output",
    "tests/llm/test_output_schema.py::test_gemini_sends_response_json_schema",
    "tests/cli/test_cli.py::test_ctrl_c_in_chat_stops_the_answer_but_not_the_chat",
    "tests/cli/test_cli.py::test_ctrl_c_stops_a_run",
    "tests/cli/test_cli.py::test_python_m_agentcore_cli_help",
    "tests/cli/test_cli.py::test_unreachable_server_exits_1",
    "tests/cli/test_cli_approve.py::test_a_command_past_its_timeout_is_killed_with_its_children",
    "tests/cli/test_cli_approve.py::test_an_abort_kills_a_running_command_and_its_children",
    "tests/cli/test_cli_tty.py",
    "tests/cli/test_cli_memory.py::test_memory_list_in_a_terminal_shows_escapes_and_obeys_none",
    "tests/web/test_web_memory.py::test_agentcore_serve_memory_serves_the_users_memories",
    "tests/test_examples.py::test_coding_helper_asks_at_the_terminal",
    "tests/test_examples.py::test_coding_helper_example_approves_the_fix_and_denies_the_test_change",
    "tests/test_examples.py::test_mcp_agent_example",
    "tests/test_examples.py::test_quickstart_says_so_when_the_server_is_not_reachable",
    "tests/test_examples.py::test_research_agent_example",
    "tests/test_examples.py::test_typed_extractor_example",
    "tests/test_examples.py::test_web_agent_example_serves_and_answers_over_http",
    "tests/test_readme.py::test_example_runs[docs/mcp.md:*",
    "tests/test_readme.py::test_example_runs[docs/temporal.md:*",
    # recorded traffic: the command line and a pytest run of their own, as processes
    "tests/recording/test_cli.py",
    "tests/recording/test_plugin.py",
    # agentcore eval as a process: drift reports and escaped case names
    "tests/evals/test_cli_eval.py::test_a_replay_that_drifts_exits_1_naming_the_difference",
    "tests/evals/test_cli_eval.py::test_a_drifted_request_sent_first_is_matched_by_content",
    "tests/evals/test_cli_eval.py::test_escape_sequences_in_the_dataset_are_printed_escaped",
    # agentcore eval --batch as a process against the local batch server
    "tests/evals/test_cli_eval_batch.py",
    # MCP servers in subprocesses, the web server's command line, node
    "tests/mcp/test_mcp_cli.py",
    "tests/mcp/test_mcp_client.py::test_a_stdio_server_through_the_loop",
    "tests/mcp/test_mcp_client.py::test_a_streamable_http_server_through_the_loop",
    "tests/mcp/test_mcp_client.py::test_leaving_early_stops_the_server_process",
    "tests/mcp/test_mcp_client.py::test_every_tool_of_a_deferred_server_waits_for_a_search",
    "tests/mcp/test_mcp_package.py",
    "tests/mcp/test_mcp_serve.py::test_served_over_stdio_to_the_sdk_client",
    "tests/mcp/test_mcp_third_party.py",
    "tests/mcp/test_mcp_elicitation.py::test_a_huge_question_is_cut_where_it_enters_and_a_sprawling_one_refused",
    "tests/mcp/test_mcp_*.py::test_a_tool_that_*_the_mcp_1x_way_works_on_a_2x_server",
    "tests/web/test_web_guard.py::test_serve_*",
    "tests/web/test_web_postgres.py",
    "tests/web/test_web_markdown.py",
    "tests/temporal/test_package.py",
    # a snippet suspended in a child process, resumed in this one
    "tests/codemode/test_code_mode_approvals.py::test_decided_after_a_restart_of_the_process",
    # DBOS worker processes started, killed with SIGKILL and started again
    "tests/durable_dbos/test_dbos_runs.py",
    "tests/durable_dbos/test_dbos_handoffs.py",
    "tests/test_support.py::test_fast_leaves_out_the_listed_and_the_server_tests",
    "tests/test_support.py::test_tests_sharing_a_fixture_run_on_one_worker",
]

EXTERNAL = [
    "tests/web/test_web_browser.py",  # headless Chromium (scripts/browser)
    "tests/web/test_web_hostile_text.py",  # headless Chromium (scripts/browser)
    "tests/web/test_web_handoffs.py::test_the_page_labels_who_speaks",  # headless Chromium
    "tests/web/test_web_code_mode_browser.py",  # headless Chromium (scripts/browser)
    "tests/web/test_web_memory_browser.py",  # headless Chromium (scripts/browser)
    "tests/web/test_web_relay_schema.py",  # PostgreSQL (scripts/postgres)
    # PostgreSQL (scripts/postgres)
    "tests/cli/test_cli_memory.py::test_serve_store_keeps_memories_in_the_sessions_database",
    "tests/test_readme.py::test_example_runs[docs/temporal.md:*",  # runs scripts/temporal start
]


def _pattern(entry: str) -> str:
    body = ".*".join(re.escape(part) for part in entry.split("*"))
    # a file covers its tests; a test covers its parameters
    return rf"{body}(?:$|::.*|\[.*)"


def matcher(entries: Iterable[str]) -> re.Pattern[str]:
    """One pattern matching (`fullmatch`) the test ids the entries name."""
    return re.compile("|".join(f"(?:{_pattern(e)})" for e in entries))
