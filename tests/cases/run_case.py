#!/usr/bin/env python3
"""Runs one planted-bug or clean program under the preload on the simulated runtime and checks
what hipshadow found: the exact multiset of finding kinds, chosen fields of the JSON findings,
the text report, and the exit status.  Usage: run_case.py CASE (paths come from the environment
that meson sets: HS_LAUNCHER, HS_CASES, HS_SIMHIP)."""
import json
import os
import re
import subprocess
import sys
import tempfile

CONTRACT_FIELDS = {"kind", "severity", "api", "action", "direction", "dst", "src", "bytes", "alloc",
                   "overrun", "stream", "stack", "thread", "time_ns", "device"}
OPTIONAL_FIELDS = {"kernels",  # device-fault and kernel-use-after-free: the launches involved
                   "fault",    # device-fault from the runtime's memory-fault event: the address
                   "python_stack",  # with the PyTorch plugin: the Python stack at the call
                   "block",    # a PyTorch caching-allocator block the finding is about
                   "cause", "cause_rule",  # runtime-error: the runtime's rule the arguments break
                   "race", "uninit"}  # stream-race: both accesses; uninitialized-read: the never-written ranges

SEED003 = {"api": "hipMemcpyDtoH", "direction": "D2H", "bytes": 544538624, "overrun": 941568,
           "alloc.offset": 1976131072, "alloc.size": 2519728128, "severity": "error"}

# What every device-fault from ROCr's memory-fault event says: the event, the reason, the
# faulting kernel as the first suspect.
GPU_FAULT = {"api": "HSA_AMD_GPU_MEMORY_FAULT_EVENT", "severity": "error", "fault.reasons": ["page-not-present"],
             "kernels.0.name": "poke"}

SEED003_OUT = ["hipMemcpyDtoH returned 1; first host byte 0xab"]  # seed003_embedding's own output
# The runtime's refusal of seed003's copy, said with the out-of-bounds found before it was forwarded
# (one bug, one finding: not a runtime-error of its own).
NOTE_SEED003 = "hipshadow: hipMemcpyDtoH then returned hipErrorInvalidValue (1), as the out-of-bounds above explains"
# What says each such refusal; a case's explained= is how many (exact).
EXPLAINED = re.compile(r"^hipshadow: \w+ then returned \w+ \(-?\d+\), as the [a-z-]+ above explains$", re.M)

# name: program, options, expected kinds (exact counts), field checks per kind, text checks, exit status;
# explained: how many runtime refusals are said with the error finding made before forwarding
CASES = {
    "seed003_embedding": dict(
        program="seed003_embedding",
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": dict(SEED003, action="forwarded")},
        stderr_has=["runs 941568 bytes past the end of allocation #1", "offset % 4096 = 3584",
                    "base + 1976131072", "2519728128 bytes", NOTE_SEED003,
                    "SUMMARY: hipshadow: 1 finding (1 error): out-of-bounds=1 in ",
                    "Allocation #1 made by thread", "in main+"],
        stderr_after=["ERROR: hipshadow: out-of-bounds on hipMemcpyDtoH", NOTE_SEED003, "SUMMARY: hipshadow: 1 finding"],
        stderr_lacks=["runtime-error"],
        exit=0),
    "block_mode_never_reaches_runtime": dict(
        program="seed003_embedding", options="mode=block", env={"SIMHIP_TRACE": "1"},
        kinds={"out-of-bounds": 1},
        fields={"out-of-bounds": dict(SEED003, action="blocked")},
        stderr_has=["simhip: hipMalloc", "action: blocked"],
        stderr_lacks=["simhip: hipMemcpyDtoH"],
        stdout_has=["hipMemcpyDtoH returned 1; first host byte 0xab"],
        exit=0),
    "abort_mode": dict(
        program="seed003_embedding", options="mode=abort",
        kinds={"out-of-bounds": 1}, fields={"out-of-bounds": {"action": "aborted"}},
        exit=-6),
    "exitcode_on_error": dict(
        program="seed003_embedding", options="exitcode=23",
        kinds={"out-of-bounds": 1}, explained=1, exit=23),
    "exitcode_clean": dict(
        program="clean_inference_loop", options="exitcode=23", kinds={}, exit=0),
    "kv_cache_dump": dict(
        program="kv_cache_dump",
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"api": "hipMemcpy", "direction": "D2H", "overrun": 8 * 8 * 128 * 4,
                                  "alloc.offset": 0, "alloc.size": 8 * 512 * 128 * 4, "alloc.id": 3}},
        exit=0),
    "use_after_free": dict(
        program="use_after_free",
        kinds={"use-after-free": 1}, explained=1,
        fields={"use-after-free": {"api": "hipMemcpy", "alloc.offset": 0, "alloc.size": 1024}},
        stderr_has=["Freed by thread", "release_scratch+", "which was freed",
                    "hipshadow: hipMemcpy then returned hipErrorIllegalAddress (700), as the use-after-free above explains"],
        exit=0),
    "destroyed_stream": dict(
        program="destroyed_stream",
        kinds={"invalid-stream": 1}, explained=1,
        fields={"invalid-stream": {"api": "hipMemcpyAsync"}},
        stderr_has=["was destroyed before this call", "Stream destroyed by thread"],
        exit=0),
    "null_pointer": dict(
        program="null_pointer",
        kinds={"null-pointer": 1}, explained=1,
        fields={"null-pointer": {"src": "0x0", "alloc": None}},
        stderr_has=["the source pointer is NULL"],
        exit=0),
    "unknown_pointer": dict(
        program="unknown_pointer",
        kinds={"unknown-pointer": 1},
        fields={"unknown-pointer": {"api": "hipMemcpyDtoH", "alloc": None}},
        stderr_has=["the runtime does not know it either"],
        exit=0),
    "direction_mismatch": dict(
        program="direction_mismatch",
        kinds={"direction-mismatch": 1},
        fields={"direction-mismatch": {"direction": "D2H", "severity": "error"}},
        stderr_has=["but its destination", "is device memory, not host memory"],
        exit=0),
    "reversed_copy_one_finding": dict(
        program="reversed_copy",
        kinds={"direction-mismatch": 1},
        fields={"direction-mismatch": {"direction": "D2H", "severity": "error", "alloc.size": 4096}},
        stderr_has=["is in no device allocation", "the direction is reversed, or the pointers are swapped"],
        exit=0),
    "pinned_too_small": dict(
        program="pinned_too_small",
        kinds={"host-out-of-bounds": 1}, explained=1,
        fields={"host-out-of-bounds": {"overrun": 3072, "alloc.size": 1024}},
        stderr_has=["pinned host memory"],
        exit=0),
    "host_readonly_and_unmapped": dict(
        program="host_readonly", options="mode=block",
        kinds={"host-out-of-bounds": 2},
        fields={"host-out-of-bounds": {"action": "blocked", "alloc": None}},
        stderr_has=["is not accessible at", "is not mapped at"],
        exit=0),
    "host_unmapped_after_check": dict(
        program="host_unmap_later", options="mode=block",
        kinds={"host-out-of-bounds": 1}, fields={"host-out-of-bounds": {"action": "blocked", "alloc": None}},
        stderr_has=["is not mapped at"], stdout_has=["mapped: 0, unmapped: 1"], exit=0),
    "host_permissions_change": dict(
        program="host_mprotect", options="mode=block",
        kinds={"host-out-of-bounds": 1}, fields={"host-out-of-bounds": {"action": "blocked"}},
        stdout_has=["before mprotect: 1, after: 0"], exit=0),
    "memset_default_double_free": dict(
        program="memset_and_free",
        kinds={"out-of-bounds": 2, "invalid-free": 1}, explained=3,
        fields={"invalid-free": {"api": "hipFree"}},
        field_sets={"out-of-bounds": [{"api": "hipMemsetD32", "overrun": 1024, "alloc.offset": 1024},
                                      {"api": "hipMemcpy", "direction": "D2H", "overrun": 104}]},
        stderr_has=["was already freed (double free)", "hipMemcpyDefault: direction taken from the shadow map"],
        exit=0),
    "passthrough_calls_frees_still_checked": dict(
        program="memset_and_free", options="passthrough=calls",
        kinds={"invalid-free": 1}, explained=1, fields={"invalid-free": {"api": "hipFree"}},
        stderr_has=["in 3 checked calls"], stderr_lacks=["out-of-bounds", "hipMemsetD32 then returned"],
        exit=0),
    "clean_seed000_pool": dict(
        program="clean_seed000_pool", kinds={},
        stdout_has=["read back in 5 chunks: 0 mismatches"],
        stderr_has=["SUMMARY: hipshadow: 0 findings (0 errors)"], exit=0),
    "clean_inference_loop": dict(
        program="clean_inference_loop", kinds={}, stdout_has=["clean loop done"], exit=0),
    "threads_no_findings_no_deadlock": dict(
        program="threads", kinds={}, stdout_has=["8 threads x 2000 cycles: 0 threads saw wrong data"],
        # every call of the threads that exited is counted: 8 x (2 + 2000 x 5 + 2)
        stderr_has=["in 80032 checked calls"], exit=0),
    "fork_child_own_findings": dict(
        program="fork_child", per_process=True,
        kinds={"out-of-bounds": 2}, explained=2, processes=2, exit=0),
    "dlopen_rtld_local": dict(
        program="dlopen_host", args=["@CASES@/libdlopen_ext.so"],
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 128}}, exit=0),
    "suppressions": dict(
        program="seed003_embedding", options="suppressions=@TMP@/supp", files={"supp": "# known\nout-of-bounds:main\n"},
        kinds={"runtime-error": 1}, exit=0),
    "bad_options_named": dict(
        program="clean_inference_loop", options="bogus=1:mode=loud:quarantine=12q:help=1",
        kinds={}, stdout_has=["clean loop done"],
        stderr_has=["unknown option 'bogus'", "option 'mode': bad value 'loud'",
                    "option 'quarantine': bad value '12q'", "  print_limit", "  suppressions"],
        exit=0),
    "suppressions_missing_file": dict(
        program="seed003_embedding", options="suppressions=@TMP@/nofile", kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["option 'suppressions': cannot read", "No such file or directory", "no findings are suppressed"],
        stderr_once=["option 'suppressions'"], stdout_has=SEED003_OUT, exit=0),
    "suppressions_missing_dir": dict(
        program="seed003_embedding", options="suppressions=@TMP@/nodir/supp", kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["option 'suppressions': cannot read '@TMP@/nodir/supp': No such file or directory; "
                     "no findings are suppressed"], stdout_has=SEED003_OUT, exit=0),
    "suppressions_is_directory": dict(
        program="seed003_embedding", options="suppressions=@TMP@", kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["option 'suppressions': cannot read", "it is a directory"],
        stderr_once=["option 'suppressions'"], stdout_has=SEED003_OUT, exit=0),
    "log_missing_dir": dict(
        program="seed003_embedding", options="log=@TMP@/nodir/hs.log", kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["cannot create the post-mortem log", "No such file or directory", "the program carries on"],
        stderr_once=["post-mortem log"], stdout_has=SEED003_OUT, exit=0),
    "log_is_directory": dict(
        program="seed003_embedding", options="log=@TMP@", kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["cannot create the post-mortem log", "Is a directory", "the program carries on"],
        stderr_once=["post-mortem log"], stdout_has=SEED003_OUT, exit=0),
    "findings_file_taken": dict(
        program="seed003_embedding", options="findings=@TMP@/findings.taken.json", files={"findings.taken.json": ""},
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["findings.taken.json' exists; this process writes its findings to", "findings.taken-1.json"],
        stderr_once=["option 'findings'"], empty_after=["findings.taken.json"], stdout_has=SEED003_OUT, exit=0),
    "findings_missing_dir": dict(
        program="seed003_embedding", options="findings=@TMP@/nodir/f.json", kinds={}, explained=1,
        stderr_has=["option 'findings': cannot create", "No such file or directory", "SUMMARY: hipshadow: 1 finding (1 error)"],
        stderr_once=["option 'findings'"], stdout_has=SEED003_OUT, exit=0),
    "findings_is_directory": dict(
        program="seed003_embedding", options="findings=@TMP@", kinds={},
        stderr_once=["is a directory, not a file; findings go to the text report only"], stdout_has=SEED003_OUT, exit=0),
    "findings_is_device": dict(
        program="seed003_embedding", options="findings=/dev/full", kinds={},
        stderr_once=["option 'findings': '/dev/full' is a device or special file, not a file"], stdout_has=SEED003_OUT,
        exit=0),
    # Hardening: bad paths for log, findings and suppressions that the cases above do
    # not cover.  Each gives one clear message and leaves the program as it was (its output, its
    # findings, its exit status).
    "log_is_device": dict(
        program="seed003_embedding", options="log=/dev/full", kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["cannot create the post-mortem log '/dev/full': it is a device or special file, not a file; "
                     "the program carries on without it"], stdout_has=SEED003_OUT, exit=0),
    "log_is_symlink": dict(
        program="seed003_embedding", options="log=@TMP@/hs.log", files={"target.log": ""},
        symlinks={"hs.log": "@TMP@/target.log"}, kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["cannot create the post-mortem log '@TMP@/hs.log': it is a symbolic link"],
        empty_after=["target.log"], stdout_has=SEED003_OUT, exit=0),
    "log_file_taken": dict(
        program="seed003_embedding", options="log=@TMP@/hs.log", files={"hs.log": ""},
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["log '@TMP@/hs.log' exists; this process writes its log to '@TMP@/hs-1.log'"],
        empty_after=["hs.log"], exists_after=["hs-1.log"], stdout_has=SEED003_OUT, exit=0),
    "findings_is_symlink": dict(
        program="seed003_embedding", options="findings=@TMP@/f.json", files={"target.json": ""},
        symlinks={"f.json": "@TMP@/target.json"}, kinds={}, explained=1,
        stderr_once=["option 'findings': '@TMP@/f.json' is a symbolic link, not a file; findings go to the text report only"],
        stderr_has=["SUMMARY: hipshadow: 1 finding (1 error)"], empty_after=["target.json"], stdout_has=SEED003_OUT, exit=0),
    "suppressions_is_device": dict(
        program="seed003_embedding", options="suppressions=/dev/full", kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["option 'suppressions': cannot read '/dev/full': it is not a regular file; no findings are suppressed"],
        stdout_has=SEED003_OUT, exit=0),
    "suppressions_symlink_followed": dict(
        program="seed003_embedding", options="suppressions=@TMP@/supp", files={"real.supp": "out-of-bounds:main\n"},
        symlinks={"supp": "@TMP@/real.supp"}, kinds={"runtime-error": 1},
        stderr_lacks=["option 'suppressions'"], stdout_has=SEED003_OUT, exit=0),
    "suppressions_dangling_symlink": dict(
        program="seed003_embedding", options="suppressions=@TMP@/supp", symlinks={"supp": "@TMP@/gone.supp"},
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["option 'suppressions': cannot read '@TMP@/supp': No such file or directory"],
        stdout_has=SEED003_OUT, exit=0),
    "suppressions_not_a_suppressions_file": dict(
        program="seed003_embedding", options="suppressions=@TMP@/notes.md",
        files={"notes.md": "".join(f"line {i} of some notes: not a rule\n" for i in range(300))},
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_once=["option 'suppressions': 300 lines of '@TMP@/notes.md' are not 'kind:pattern' with a known kind "
                     "or '*' (the first is line 1); they are ignored, and no findings are suppressed"],
        stdout_has=SEED003_OUT, exit=0),
    "suppressions_one_bad_line": dict(
        program="seed003_embedding", options="suppressions=@TMP@/supp",
        files={"supp": "# known\nout-of-bound:main\nout-of-bounds:main\n"}, kinds={"runtime-error": 1},
        stderr_once=["@TMP@/supp:2: expected 'kind:pattern' with a known kind or '*'; line ignored"],
        stdout_has=SEED003_OUT, exit=0),
    # Hardening: signals, exit order, calls before hipshadow's constructor.
    "signal_handlers_kept": dict(
        program="signal_chain", options="log=@TMP@/hs.%p.log", kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 64}}, stdout_has=["handlers: kept 5 of 5, ran 2 of 2"],
        stdout_lacks=["was replaced"], exit=0),
    "exit_atexit_handler_counted": dict(
        program="exit_order", args=["atexit"], options="exitcode=7", kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 72}}, stdout_has=["exit_order atexit: main done"],
        stderr_has=["exit_order: handler done", "SUMMARY: hipshadow: 1 finding (1 error)"], exit=7),
    "exit_handler_after_summary": dict(
        program="exit_order", args=["late"], options="exitcode=7", kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 72}}, stdout_has=["exit_order late: main done"],
        stderr_has=["SUMMARY: hipshadow: 0 findings (0 errors)", "exit_order: handler done"],
        stderr_once=["SUMMARY: hipshadow: out-of-bounds"],
        stderr_after=["SUMMARY: hipshadow: 0 findings", "the next finding comes after the exit SUMMARY",
                      "ERROR: hipshadow: out-of-bounds", "exit_order: handler done"], exit=0),
    "exit_with_threads_copying": dict(
        program="exit_order", args=["thread"], kinds={}, stdout_has=["exit_order thread: main done"],
        stderr_has=["SUMMARY: hipshadow: 0 findings (0 errors)"], exit=0),
    # The program closes every descriptor and gives its own file every number up to 2048, after
    # hipshadow opened its log, findings file and text report: none of them may write into it
    # (before the guard, the text report, a finding and the log's growth all did) or close it.
    "daemon_closes_descriptors": dict(
        program="daemon_fds", args=["@TMP@/own.txt"],
        options="log=@TMP@/run.log:log_mode=full:report_path=@TMP@/report.txt",
        kinds={"out-of-bounds": 1}, explained=2,  # the findings made before the close; both copies refused
        stdout_has=["own file intact", "own descriptors open: all"],
        stderr_once=["post-mortem log '@TMP@/run.log': the program closed its file descriptor",
                     "option 'report_path': the program closed the descriptor of '@TMP@/report.txt'; reporting on stderr",
                     "option 'findings': the program closed the descriptor of"],
        stderr_has=["SUMMARY: hipshadow: 2 findings (2 errors)"],
        report_file_has=["ERROR: hipshadow: out-of-bounds on hipMemcpy"], exit=0),
    # errno after a wrapped call is the runtime's, not hipshadow's (before: hipMalloc's first
    # call left EAGAIN from hipshadow's start-up), on the main thread and on a second one.
    "errno_kept": dict(
        program="errno_kept", options="log=@TMP@/run.log:log_mode=full",
        kinds={"out-of-bounds": 2, "invalid-free": 2}, explained=4,
        stdout_has=["errno kept: 60 calls"], exit=0),
    # Threads of 16 KiB (PTHREAD_STACK_MIN) and 32 KiB stacks make the first wrapped call (the log
    # is created there) and a bad copy each: reported, logged, written; the 16 KiB one records
    # no stacks (said once).  Before, the program crashed.
    "small_stacks": dict(
        program="small_stacks", options="log=@TMP@/run.log:report_path=@TMP@/report.txt",
        kinds={"out-of-bounds": 2}, explained=2, stackless=1, stdout_has=["small stacks: 2 threads done"],
        stderr_once=["bytes of stack left at a wrapped call, a stack walk needs 10240"],
        report_file_has=["ERROR: hipshadow: out-of-bounds on hipMemcpy", "SUMMARY: hipshadow: 2 findings (2 errors)"],
        exists_after=["run.log"], exit=0),
    "calls_before_init": dict(
        program="early_calls", options="mode=block:exitcode=7", kinds={"out-of-bounds": 3},
        field_sets={"out-of-bounds": [{"overrun": 32, "alloc.size": 128, "action": "blocked"},
                                      {"overrun": 64, "alloc.size": 96, "action": "blocked"},
                                      {"overrun": 16, "alloc.size": 48, "action": "blocked"}]},
        stderr_has=["early_calls: preinit ran", "early_calls_lib: constructor ran"],
        stdout_has=["early calls: preinit 1, library 1, main done"], exit=7),
    "report_path_file": dict(
        program="kv_cache_dump", options="report_path=@TMP@/report.%p.txt",
        kinds={"out-of-bounds": 1}, explained=1, report_file_has=["ERROR: hipshadow: out-of-bounds"],
        stderr_lacks=["ERROR: hipshadow"], exit=0),
    "report_path_unwritable": dict(
        program="kv_cache_dump", options="report_path=/dev/full",
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["option 'report_path': '/dev/full' is a device or special file, not a file; reporting on stderr",
                    "ERROR: hipshadow: out-of-bounds", "SUMMARY: hipshadow: 1 finding (1 error)"], exit=0),
    "report_path_missing_dir": dict(
        program="kv_cache_dump", options="report_path=/nonexistent-dir/r.%p.txt",
        kinds={"out-of-bounds": 1}, explained=1,
        stderr_has=["option 'report_path': cannot create '/nonexistent-dir/r.", "No such file or directory; reporting on stderr",
                    "ERROR: hipshadow: out-of-bounds", "SUMMARY: hipshadow: 1 finding (1 error)"], exit=0),
    "pause_resume": dict(
        program="pause_resume",
        kinds={"out-of-bounds": 1, "runtime-error": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 128, "bytes": 256}}, stdout_has=["pause/resume done"], exit=0),
    # hipshadow_print_stats(): the counts so far at each call (nothing before the first wrapped
    # call, three copies at the second mark), and the exit line as ever; off, or without the
    # preload, nothing printed and -1.
    "stats_marks": dict(
        program="stats_marks", options="stats=1", kinds={}, stdout_has=["marks 0 0"],
        stderr_count={"hipshadow: STATS ": 3},
        stderr_after=["hipshadow: STATS launch=0 launch_fast=0 copy=0 copy_fast=0 memset=0 alloc=0 ",
                      " copy_fast=3 memset=0 alloc=1 free=0 ", " copy_fast=4 memset=0 alloc=1 free=1 "], exit=0),
    "stats_marks_off": dict(
        program="stats_marks", kinds={}, stdout_has=["marks -1 -1"], stderr_lacks=["STATS"], exit=0),
    "stats_marks_without_preload": dict(
        program="stats_marks", no_preload=True, kinds={}, stdout_has=["marks -1 -1"], stderr_lacks=["hipshadow"],
        exit=0),
    "public_api_without_preload": dict(
        program="pause_resume", no_preload=True, kinds={}, stdout_has=["pause/resume done"],
        stderr_lacks=["hipshadow"], exit=0),
    "unwrapped_alloc_asks_runtime": dict(
        program="unwrapped_alloc",
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 928, "alloc.size": 4096, "alloc.offset": 1024}},
        stderr_has=["not allocated through a wrapped call (the runtime knows it)"], exit=0),
    "kernel_far_write": dict(
        program="kernel_cases", options="fault_events=0", args=["far-write"],
        kinds={"device-fault": 1},
        fields={"device-fault": {"api": "hipMemcpyDtoH", "kernels.#": 1, "kernels.0.name": "poke",
                                 "kernels.0.args.0.alloc.id": 1, "kernels.0.args.0.alloc.offset": 0,
                                 "kernels.0.args.0.state": "live", "kernels.0.args.0.how": "exact",
                                 "kernels.0.args.#": 1}},
        stderr_has=["a fault of asynchronous work already on the device", "this call's own arguments were checked and are clean",
                    "#0 kernel 'poke' (hipModuleLaunchKernel)", "arg 0 = 0x", ": allocation #1 + 0, live"], exit=0),
    # The environment behind GPU memory behaviour goes out with the first report, and a variable
    # known to cause faults is called out beside the device-fault too.
    "environment_beside_device_fault": dict(
        program="kernel_cases", options="fault_events=0", args=["far-write"],
        env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True",
             "HIP_LAUNCH_BLOCKING": "0\n==1==ERROR: fake"},
        kinds={"device-fault": 1},
        stderr_has=["Environment (variables that change GPU memory behaviour, as set for this process):\n"
                    "    HSA_OVERRIDE_GFX_VERSION=10.3.0\n    HIP_LAUNCH_BLOCKING=0?==1==ERROR: fake\n"
                    "    PYTORCH_HIP_ALLOC_CONF=expandable_segments:True\n",
                    "Set for this process, and known to cause device faults when misused:\n"
                    "    HSA_OVERRIDE_GFX_VERSION=10.3.0 (ROCr loads code objects built for the named GPU"],
        exit=0),
    "environment_once": dict(
        program="memset_and_free", env={"HIP_VISIBLE_DEVICES": "0"},
        kinds={"out-of-bounds": 2, "invalid-free": 1}, explained=3,
        stderr_has=["Environment (variables that change GPU memory behaviour, as set for this process):\n"
                    "    HIP_VISIBLE_DEVICES=0\n"],
        stderr_count={"Environment (variables": 1},
        stderr_lacks=["known to cause device faults"], exit=0),
    # A suppression's glob also matches the launched kernel's name: the launch finding goes, the
    # device fault (another kind) stays.
    "kernel_suppressed_by_name": dict(
        program="kernel_cases", options="fault_events=0:suppressions=@TMP@/supp", args=["freed-arg"],
        files={"supp": "kernel-use-after-free:po?e\n"}, kinds={"device-fault": 1},
        stderr_lacks=["kernel-use-after-free on"], exit=0),
    "kernel_freed_arg": dict(
        program="kernel_cases", options="fault_events=0", args=["freed-arg"],
        kinds={"kernel-use-after-free": 1, "device-fault": 1},
        fields={"kernel-use-after-free": {"severity": "error", "api": "hipModuleLaunchKernel", "alloc.id": 1,
                                          "kernels.0.name": "poke", "kernels.0.args.0.state": "freed",
                                          "kernels.0.args.0.how": "exact"},
                "device-fault": {"kernels.0.args.0.state": "freed"}},
        stderr_has=["argument 0 = 0x", "(a pointer parameter) points into allocation #1 + 0, freed",
                    "Freed by thread"], exit=0),
    # The same findings from a kernel launched before (the fast path hands the launch over): a
    # destroyed stream, then a freed buffer.
    "kernel_known_freed_arg": dict(
        program="kernel_cases", options="fault_events=0", args=["known-kernel"],
        kinds={"invalid-stream": 1, "kernel-use-after-free": 1, "device-fault": 1},
        fields={"kernel-use-after-free": {"severity": "error", "api": "hipModuleLaunchKernel",
                                          "kernels.0.name": "poke", "kernels.0.args.0.state": "freed"},
                "invalid-stream": {"api": "hipModuleLaunchKernel"}},
        exit=0),
    # A launch with the same kernel and words as a clean one before it, once their buffer is freed:
    # the memo of argument facts (one answer, by stats=1) does not outlive the free.
    "kernel_same_words_freed": dict(
        program="kernel_cases", options="fault_events=0:stats=1", args=["same-words-freed"],
        kinds={"kernel-use-after-free": 1, "device-fault": 1}, stderr_has=["launch_memo=1 "],
        fields={"kernel-use-after-free": {"api": "hipModuleLaunchKernel", "kernels.0.args.0.state": "freed"}},
        exit=0),
    # A fast-path launch the runtime refuses is withdrawn from the ledger, as the full path's is:
    # the later fault names the one launch that ran.
    "kernel_known_refused_not_suspect": dict(
        program="kernel_cases", options="fault_events=0", args=["known-refused"],
        kinds={"runtime-error": 1, "device-fault": 1},
        fields={"device-fault": {"kernels.#": 1, "kernels.0.name": "poke"}},
        exit=0),
    "kernel_stub_freed_arg": dict(
        program="kernel_cases", options="fault_events=0", args=["stub-freed-arg"],
        kinds={"kernel-use-after-free": 1, "device-fault": 1},
        fields={"kernel-use-after-free": {"severity": "error", "api": "hipLaunchKernel", "kernels.0.name": "poke",
                                          "kernels.0.args.0.state": "freed", "kernels.0.args.0.how": "exact",
                                          "kernels.#": 1}},
        stderr_has=["kernel 'poke' is launched with a pointer into freed memory"], exit=0),
    "kernel_suspects": dict(
        program="kernel_cases", options="fault_events=0", args=["serialize"],
        kinds={"device-fault": 1},
        fields={"device-fault": {"kernels.#": 3, "kernels.0.args.0.alloc.id": 1, "kernels.1.args.0.alloc.id": 2,
                                 "kernels.2.args.0.alloc.id": 1}},
        stderr_has=["launches not yet known to have completed, newest first"], exit=0),
    "kernel_serialize_names_launch": dict(
        program="kernel_cases", args=["serialize"], options="serialize=1:fault_events=0",
        kinds={"device-fault": 1},
        fields={"device-fault": {"api": "hipModuleLaunchKernel", "kernels.#": 1, "kernels.0.args.0.alloc.id": 2}},
        stderr_has=["serialize=1: the launch below", "the launch that faulted", "launched at:"], exit=0),
    "kernel_redzone_overflow": dict(
        program="kernel_cases", args=["overflow"], options="redzones=64", env={"SIMHIP_TRACE": "1"},
        kinds={"kernel-out-of-bounds-write": 1},
        fields={"kernel-out-of-bounds-write": {"api": "hipMemcpyDtoH", "alloc.id": 1, "alloc.size": 4000, "overrun": 44,
                                               "kernels.#": 1, "kernels.0.name": "poke",
                                               "kernels.0.args.0.alloc.id": 1}},
        stderr_has=["bytes 40..43 past the end of allocation #1 were overwritten", "redzone of 96 bytes",
                    "kernel 'poke'", "simhip: kernel hs_redzone_fill, 1 blocks", "simhip: kernel hs_redzone_verify, 1 blocks",
                    "by hipshadow's kernel"],
        stderr_lacks=["simhip: hipMemset"], exit=0),
    "kernel_redzone_overflow_read_back": dict(
        program="kernel_cases", args=["overflow"], options="redzones=64:fault_events=0",
        env={"SIMHIP_NO_REDZONE_KERNELS": "1", "SIMHIP_TRACE": "1"},
        kinds={"kernel-out-of-bounds-write": 1},
        fields={"kernel-out-of-bounds-write": {"alloc.id": 1, "overrun": 44, "kernels.0.name": "poke"}},
        stderr_has=["bytes 40..43 past the end of allocation #1 were overwritten", "simhip: hipMemset", "by reading it back"],
        stderr_lacks=["simhip: kernel hs_redzone"], exit=0),
    "kernel_redzone_at_exit": dict(
        program="kernel_cases", args=["overflow-at-exit"], options="redzones=64:fault_events=0",
        kinds={"kernel-out-of-bounds-write": 1},
        fields={"kernel-out-of-bounds-write": {"alloc.id": 1, "overrun": 44, "kernels.0.name": "poke"}},
        stderr_has=["bytes 40..43 past the end of allocation #1 were overwritten", "checked at exit"], exit=0),
    "kernel_redzone_async_alloc": dict(
        program="kernel_cases", args=["overflow-async"], options="redzones=64:fault_events=0",
        kinds={"kernel-out-of-bounds-write": 1},
        fields={"kernel-out-of-bounds-write": {"api": "hipStreamSynchronize", "alloc.id": 1, "alloc.size": 4000,
                                               "overrun": 44, "kernels.0.name": "poke"}},
        stderr_has=["bytes 40..43 past the end of allocation #1 were overwritten"], exit=0),
    "kernel_redzone_two_devices": dict(
        program="kernel_cases", args=["overflow-two-devices"], options="redzones=64:fault_events=0",
        kinds={"kernel-out-of-bounds-write": 1},
        fields={"kernel-out-of-bounds-write": {"alloc.id": 2, "overrun": 44, "device": 1}},
        stderr_has=["past the end of allocation #2 were overwritten", "by reading it back"], exit=0),
    "kernel_host_fn_retires": dict(
        program="kernel_cases", args=["host-fn-retires"], options="fault_events=0",
        kinds={"device-fault": 1},
        fields={"device-fault": {"api": "hipMemcpyDtoH", "kernels.#": 1, "kernels.0.args.0.alloc.id": 2}}, exit=0),
    "kernel_redzones_clean": dict(
        program="kernel_cases", args=["clean"], options="redzones=64", kinds={},
        stdout_has=["kernels clean: data round-trips"], exit=0),
    # Stream races (stream_race.c): a kernel argument the metadata says nothing of is a possible
    # write (a warning); a known read against a copy's write is an error; ordered pairs are clean.
    "race_kernel_then_copy": dict(
        program="stream_race", args=["kernel-then-copy"], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipMemcpyAsync", "race.other.api": "hipModuleLaunchKernel",
                                "race.other.kernel": "scale", "race.other.access": "write", "race.other.known": False,
                                "race.this.access": "read", "race.bytes": 256, "alloc.id": 2}},
        stderr_has=["WARNING: hipshadow: stream-race on hipMemcpyAsync", "earlier, still in flight: hipModuleLaunchKernel",
                    "(hipEventRecord)", "(hipStreamWaitEvent)", "Earlier access (hipModuleLaunchKernel"],
        exit=0),
    "race_off": dict(
        program="stream_race", args=["kernel-then-copy"], options="races=0", kinds={}, exit=0),
    "race_copy_then_kernel": dict(
        program="stream_race", args=["copy-then-kernel"], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipModuleLaunchKernel", "race.other.api": "hipMemcpyAsync",
                                "race.other.access": "read", "race.this.kernel": "scale", "alloc.id": 2}},
        exit=0),
    "race_write_under_read": dict(
        program="stream_race", args=["write-under-read", "restrict"], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "error", "api": "hipMemcpyAsync", "race.other.kernel": "scale_r",
                                "race.other.access": "read", "race.other.known": True, "race.this.access": "write",
                                "alloc.id": 1}},
        exit=0),
    # A pool's interior sub-buffers (no block or region holds them): kernels on disjoint ones are
    # no race; a copy into the sub-buffer a kernel on another stream reads still is.
    "race_pool_disjoint_clean": dict(program="stream_race", args=["pool-disjoint"], kinds={}, exit=0),
    # The same from a launch whose argument facts were remembered (launch_memo): its accesses still
    # start at its interior pointer, so B's part of the pool is no race.
    "race_pool_disjoint_again_clean": dict(program="stream_race", args=["pool-disjoint-again"], kinds={},
                                           options="stats=1", stderr_has=["launch_memo="], exit=0),
    "race_pool_copy_then_kernel": dict(
        program="stream_race", args=["pool-copy-kernel"], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipModuleLaunchKernel", "race.other.api": "hipMemcpyAsync",
                                "race.other.access": "write", "race.this.kernel": "scale", "race.bytes": 256,
                                "alloc.id": 3}},
        exit=0),
    # The same with the kernel's words remembered from a clean launch before (launch_memo): the
    # memo answers the arguments (at the fast path, then at the full path it hands over to: two
    # answers), the race is still searched for and found.
    "race_pool_copy_then_known_kernel": dict(
        program="stream_race", args=["pool-copy-known-kernel"], options="stats=1",
        stderr_has=["launch_memo=2 "], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipModuleLaunchKernel", "race.other.api": "hipMemcpyAsync",
                                "race.other.access": "write", "race.this.kernel": "scale", "race.bytes": 256,
                                "alloc.id": 3}},
        exit=0),
    # Two kernels on two streams writing one buffer; and a launch whose ledger record was
    # overwritten (ledger_size=4) before the other stream's copy: its accesses were kept.
    "race_kernel_then_kernel": dict(
        program="stream_race", args=["kernel-then-kernel"], kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipModuleLaunchKernel",
                                "race.other.api": "hipModuleLaunchKernel", "race.other.kernel": "scale",
                                "race.other.access": "write", "race.this.kernel": "scale", "alloc.id": 2}},
        exit=0),
    "race_kernel_sync_kernel_clean": dict(program="stream_race", args=["kernel-sync-kernel"], kinds={}, exit=0),
    # An async D2D on A's stream while nothing else is in flight takes the fast path; its accesses
    # wait there, and B's kernel that overwrites its destination still races with it.  Then the
    # same with A synchronised between (clean), and the D2D second, on B, after A's kernel.
    "race_d2d_then_kernel": dict(
        program="stream_race", args=["d2d-then-kernel"], options="stats=1", stderr_has=[" copy_async_fast=1 "],
        kinds={"stream-race": 1},
        fields={"stream-race": {"severity": "warning", "api": "hipModuleLaunchKernel", "race.other.api": "hipMemcpyAsync",
                                "race.other.access": "write", "race.this.kernel": "scale", "race.bytes": 256,
                                "alloc.id": 2}},
        exit=0),
    "race_d2d_sync_kernel_clean": dict(program="stream_race", args=["d2d-sync-kernel"], options="stats=1",
                                       stderr_has=[" copy_async_fast=1 "], kinds={}, exit=0),
    "race_kernel_then_d2d": dict(
        program="stream_race", args=["kernel-then-d2d"], kinds={"stream-race": 1},
        fields={"stream-race": {"api": "hipMemcpyAsync", "race.other.api": "hipModuleLaunchKernel",
                                "race.other.kernel": "scale", "race.other.access": "write", "alloc.id": 1}},
        exit=0),
    "race_ledger_overwritten": dict(
        program="stream_race", args=["kernels-then-copy"], options="ledger_size=4", kinds={"stream-race": 1},
        fields={"stream-race": {"api": "hipMemcpyAsync", "race.other.api": "hipModuleLaunchKernel",
                                "race.other.kernel": "scale", "race.other.access": "write", "alloc.id": 2}},
        exit=0),
    "race_twice_asked": dict(
        program="stream_race", args=["twice-asked"], kinds={"stream-race": 2},
        fields={"stream-race": {"api": "hipMemcpyAsync", "race.other.kernel": "scale", "race.other.access": "write"}},
        exit=0),
    "race_waiting_copies_full": dict(
        program="stream_race", args=["copies-then-kernel"], kinds={"stream-race": 1},
        fields={"stream-race": {"api": "hipModuleLaunchKernel", "race.other.api": "hipMemcpyAsync",
                                "race.other.access": "read", "race.this.kernel": "scale", "alloc.id": 2}},
        exit=0),
    "race_event_clean": dict(program="stream_race", args=["event"], kinds={}, exit=0),
    "race_sync_clean": dict(program="stream_race", args=["sync"], kinds={}, exit=0),
    "race_device_sync_clean": dict(program="stream_race", args=["device-sync"], kinds={}, exit=0),
    # initcheck=1: reads of bytes nothing wrote
    "uninit_d2h": dict(
        program="stream_race", args=["uninit-d2h"], options="initcheck=1", kinds={"uninitialized-read": 1},
        fields={"uninitialized-read": {"severity": "error", "api": "hipMemcpy", "direction": "D2H", "alloc.id": 2,
                                       "uninit.never_written.0.offset": 0, "uninit.never_written.0.bytes": 256}},
        stderr_has=["never written: [0x"], exit=0),
    "uninit_short_memset": dict(
        program="stream_race", args=["uninit-short"], options="initcheck=1", kinds={"uninitialized-read": 1},
        fields={"uninitialized-read": {"severity": "warning", "api": "hipModuleLaunchKernel", "alloc.id": 1,
                                       "uninit.never_written.0.offset": 252, "uninit.never_written.0.bytes": 4,
                                       "uninit.written.0.bytes": 252}},
        stderr_has=["the memset of 252 bytes at 0x", "covered 252 of 256 bytes"], exit=0),
    "uninit_clean": dict(program="stream_race", args=["uninit-clean"], options="initcheck=1", kinds={}, exit=0),
    "uninit_off_by_default": dict(program="stream_race", args=["uninit-d2h"], kinds={}, exit=0),
    # A suppression names either kind (its pattern matches a frame of the call's stack): the finding goes.
    "race_suppressed": dict(
        program="stream_race", args=["kernel-then-copy"], options="suppressions=@TMP@/supp",
        files={"supp": "stream-race:main\n"}, kinds={}, stderr_lacks=["stream-race on", "option 'suppressions'"], exit=0),
    "uninit_suppressed": dict(
        program="stream_race", args=["uninit-d2h"], options="initcheck=1:suppressions=@TMP@/supp",
        files={"supp": "uninitialized-read:main\n"}, kinds={},
        stderr_lacks=["uninitialized-read on", "option 'suppressions'"], exit=0),
    "kernel_clean_pipeline": dict(
        program="kernel_cases", args=["clean"], kinds={}, stdout_has=["kernels clean: data round-trips"],
        stderr_lacks=["memory fault event"], exit=0),
    # GPU memory faults announced by ROCr's system event (simhsa.c): reported at once, with where
    # the address falls; then the sticky error (CLR's default) or ROCr's abort.
    "gpu_fault_past_end": dict(
        program="kernel_cases", args=["overflow"],
        kinds={"device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "past-end", "fault.alloc.id": 1,
                                                   "fault.alloc.size": 4000, "fault.alloc.offset": 4040,
                                                   "alloc.id": 1, "alloc.offset": 4040})},
        stderr_has=["the address is 40 bytes past the end of allocation #1", "Allocation #1 made by thread",
                    "1 handler, not handled", "the first 1 had a pointer into or next to the faulting address",
                    "hipMemcpyDtoH(host, a, sizeof host) failed with code 700"], exit=99),
    "gpu_fault_freed": dict(
        program="kernel_cases", args=["freed-arg"],
        kinds={"kernel-use-after-free": 1, "device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "freed", "fault.alloc.id": 1,
                                                   "fault.alloc.offset": 0, "kernels.0.args.0.state": "freed"})},
        stderr_has=["at offset 0, FREED", "Freed by thread", "in main+"], exit=0),
    "gpu_fault_far": dict(
        program="kernel_cases", args=["far-write"],
        kinds={"device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "unknown", "fault.alloc": None,
                                                   "fault.below.id": 1, "fault.above": None, "alloc": None})},
        stderr_has=["near no allocation hipshadow knows; the nearest below is allocation #1"], exit=0),
    "gpu_fault_near_launch_first": dict(
        program="kernel_cases", args=["fault-near-older-launch"],
        kinds={"device-fault": 1},
        fields={"device-fault": {"fault.where": "past-end", "fault.alloc.id": 1, "fault.alloc.offset": 4040,
                                 "kernels.#": 2, "kernels.0.args.0.alloc.id": 1, "kernels.1.args.0.alloc.id": 2}},
        stderr_has=["the first 1 had a pointer into or next to the faulting address"], exit=0),
    "gpu_fault_past_end_abort": dict(
        program="kernel_cases", args=["overflow"], env={"HIP_SKIP_ABORT_ON_GPU_ERROR": "0"},
        kinds={"device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "past-end", "fault.alloc.offset": 4040})},
        stderr_has=["Memory access fault by GPU node-1", "40 bytes past the end"], exit=-6),
    "gpu_fault_freed_abort": dict(
        program="kernel_cases", args=["freed-arg"], env={"HIP_SKIP_ABORT_ON_GPU_ERROR": "0"},
        kinds={"kernel-use-after-free": 1, "device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "freed", "fault.alloc.id": 1})},
        stderr_has=["Memory access fault by GPU node-1", "Freed by thread"], exit=-6),
    "gpu_fault_far_abort": dict(
        program="kernel_cases", args=["far-write"], env={"HIP_SKIP_ABORT_ON_GPU_ERROR": "0"},
        kinds={"device-fault": 1},
        fields={"device-fault": dict(GPU_FAULT, **{"fault.where": "unknown", "fault.below.id": 1})},
        stderr_has=["Memory access fault by GPU node-1"], exit=-6),
    "gpu_fault_registration_refused": dict(
        program="kernel_cases", args=["overflow"], env={"SIMHSA_REFUSE_HANDLERS": "1"},
        kinds={"device-fault": 1},
        fields={"device-fault": {"api": "hipMemcpyDtoH", "kernels.0.name": "poke", "kernels.0.args.0.alloc.id": 1}},
        stderr_has=["could not register an HSA system event handler (hsa_amd_register_system_event_handler failed",
                    "GPU memory faults are traced through the launch ledger only"], exit=99),
    "gpu_fault_events_off": dict(
        program="kernel_cases", args=["overflow"], options="fault_events=0",
        kinds={"device-fault": 1},
        fields={"device-fault": {"api": "hipMemcpyDtoH", "kernels.0.name": "poke"}},
        stderr_has=["0 handlers, not handled"], exit=99),
    "unwrapped_alloc_rocm6_layout": dict(
        program="unwrapped_alloc", env={"SIMHIP_ROCM": "6"},
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 928, "alloc.size": 4096, "alloc.offset": 1024}},
        stderr_has=["not allocated through a wrapped call (the runtime knows it)"], exit=0),
    "unwrapped_alloc_rocm7_layout": dict(
        program="unwrapped_alloc", env={"SIMHIP_ROCM": "7"},
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 928, "alloc.size": 4096, "alloc.offset": 1024}},
        stderr_has=["not allocated through a wrapped call (the runtime knows it)"], exit=0),
    "unwrapped_pinned_rocm5": dict(
        program="unwrapped_pinned", env={"SIMHIP_ROCM": "5", "SIMHIP_TRACE": "1"},
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"direction": "D2H", "overrun": 4096, "alloc.size": 4096}},
        stderr_has=["simhip: hipPointerGetAttributes"], stdout_has=["pinned copies done"], exit=0),
    "unwrapped_pinned_rocm6": dict(
        program="unwrapped_pinned", env={"SIMHIP_ROCM": "6", "SIMHIP_TRACE": "1"},
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"direction": "D2H", "overrun": 4096, "alloc.size": 4096}},
        stderr_has=["simhip: hipPointerGetAttributes"], stdout_has=["pinned copies done"], exit=0),
    "unwrapped_pinned_rocm7": dict(
        program="unwrapped_pinned", env={"SIMHIP_ROCM": "7", "SIMHIP_TRACE": "1"},
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"direction": "D2H", "overrun": 4096, "alloc.size": 4096}},
        stderr_has=["simhip: hipPointerGetAttributes"], stdout_has=["pinned copies done"], exit=0),
    "proc_address_rocm5": dict(
        program="proc_address", env={"SIMHIP_ROCM": "5"},
        kinds={"out-of-bounds": 1}, explained=1, fields={"out-of-bounds": {"api": "hipMemcpyDtoH", "overrun": 928}},
        stdout_has=["hipGetProcAddress: %d," % 801], exit=0),
    "proc_address_rocm6": dict(
        program="proc_address", env={"SIMHIP_ROCM": "6"},
        kinds={"out-of-bounds": 1}, explained=1, fields={"out-of-bounds": {"api": "hipMemcpyDtoH", "overrun": 928}},
        stdout_has=["hipGetProcAddress: 0, status 0, wrapper 1"], exit=0),
    "proc_address_rocm7": dict(
        program="proc_address", env={"SIMHIP_ROCM": "7"},
        kinds={"out-of-bounds": 1}, explained=1, fields={"out-of-bounds": {"api": "hipMemcpyDtoH", "overrun": 928}},
        stdout_has=["hipGetProcAddress: 0, status 0, wrapper 1"], exit=0),
    "dlsym_returns_wrappers": dict(
        program="dlsym_lookups",
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"overrun": 928, "alloc.size": 4096, "alloc.offset": 1024, "alloc.id": 1}},
        stdout_has=["handle=1 next=1 default=1 version=1"],
        stderr_has=["from hipMalloc"], stderr_lacks=["the runtime knows it"], exit=0),
    # Each refusal names the runtime's rule its arguments break, in the table's order.
    "runtime_rules": dict(
        program="runtime_rules",
        kinds={"runtime-error": 12},
        field_sets={"runtime-error": [
            {"api": "hipMemcpy2D", "cause_rule": "copy-pitch"},
            {"api": "hipMemcpy", "cause_rule": "copy-kind"},
            {"api": "hipMemcpyPeer", "cause_rule": "peer-device"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-empty"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-block-dim"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-block-threads"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-grid-dim"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-shared-memory"},
            {"api": "hipModuleLaunchKernel", "cause_rule": "launch-grid-size"},
            {"api": "hipEventRecord", "cause_rule": "event-device"},
            {"api": "hipMalloc", "cause_rule": "alloc-size"},
            {"api": "hipMemCreate", "cause_rule": "vmm-size-zero"}]},
        stderr_has=["cause: the destination pitch 512 is below the width 1024: the runtime rejects 2-D and 3-D copies "
                    "whose pitch is below their width (rule copy-pitch)",
                    "cause: the kind 7 is not a memcpy kind", "cause: the destination device is 5, but there are 2 devices",
                    "cause: the grid (0, 1, 1) has a zero dimension", "cause: block.z is 2048, over the device's maximum 1024",
                    "cause: the block (32, 32, 2) has 2048 threads, over the device's 1024",
                    "cause: grid.y is 70000, over the device's maximum 65536",
                    "cause: 65537 bytes of dynamic shared memory are asked for, over the device's 65536 per block",
                    "cause: grid.x * block.x = 4194304 * 1024 = 4294967296 work-items, over 4294967295"],
        exit=0),
    "async_overlap": dict(
        program="async_overlap",
        kinds={"async-overlap": 2},
        field_sets={"async-overlap": [{"api": "hipMemcpyAsync", "direction": "D2H", "bytes": 4096},
                                      {"api": "hipMemcpyAsync", "direction": "H2D", "bytes": 8192}]},
        stderr_has=["also writes, and nothing orders the two", "this async copy reads host memory"], exit=0),
    "free_while_pending": dict(
        program="free_while_pending",
        kinds={"free-while-pending": 2},
        field_sets={"free-while-pending": [{"api": "hipFreeAsync", "alloc.size": 65536},
                                           {"api": "hipHostFree", "alloc.size": 65536}]},
        stderr_has=["is freed while a pending hipMemcpyAsync (D2H, 65536 bytes)"], exit=0),
    "stream_callback_retires": dict(
        program="stream_callback", args=["retires"], kinds={"runtime-error": 2},
        field_sets={"runtime-error": [{"api": "hipStreamAddCallback"}, {"api": "hipLaunchHostFunc"}]},
        stdout_has=["callback: 1 call, own stream yes, status 0", "no callback: refused", "no host function: refused"],
        exit=0),
    "host_fn_churn_flat": dict(
        program="stream_callback", args=["churn", "300000"], kinds={},
        stdout_has=["churn: 300000 host functions and 300000 callbacks ran"], exit=0),
    "null_arguments_as_plain": dict(
        program="null_arguments", stdout_as_plain=True, stdout_has=["null arguments: done"],
        kinds={"null-pointer": 6, "runtime-error": 23}, explained=4, exit=0),
    "capture_violation": dict(
        program="capture_violation",
        kinds={"capture-violation": 2}, explained=2,
        field_sets={"capture-violation": [{"api": "hipMemcpyWithStream"}, {"api": "hipStreamSynchronize"}]},
        stderr_has=["is being captured into a graph: a synchronous copy is not allowed",
                    "a synchronous synchronisation is not allowed"], exit=0),
    "pageable_async_info_once": dict(
        program="pageable_async", options="exitcode=9:notes=1",
        kinds={"pageable-async": 1}, fields={"pageable-async": {"severity": "info"}},
        stderr_has=["said once per call site", "SUMMARY: hipshadow: 1 finding (0 errors)"], exit=0),
    "pageable_async_off_by_default": dict(program="pageable_async", kinds={}, exit=0),
    "pool_destroy_use_after_free": dict(
        program="pool_destroy",
        kinds={"use-after-free": 1}, explained=1,
        fields={"use-after-free": {"alloc.size": 1024}},
        stderr_has=["Freed by thread", "from hipMallocFromPoolAsync"], exit=0),
    # Bounded memory: a cap reached is said once (the only warning), never a failure.
    "caps_streams_reused": dict(
        program="caps", args=["streams-reused"], options="streams_max=4",
        kinds={"async-overlap": 1},
        fields={"async-overlap": {"api": "hipMemcpyAsync", "direction": "D2H", "bytes": 4096}},
        stdout_has=["streams reused"], stderr_lacks=["streams_max", "hipshadow: WARNING"], exit=0),
    "caps_streams_cap": dict(
        program="caps", args=["streams-cap"], options="streams_max=4",
        kinds={"invalid-stream": 1, "async-overlap": 1}, explained=1,
        stdout_has=["streams capped"],
        stderr_has=["was destroyed before this call"],
        stderr_once=["hipshadow: WARNING", "hipshadow: WARNING: streams_max=4 reached"], exit=0),
    "caps_streams_churn": dict(
        program="caps", args=["streams-churn"], options="streams_max=4",
        kinds={}, stdout_has=["streams churned"],
        stderr_once=["hipshadow: WARNING", "hipshadow: WARNING: streams_max=4 reached"], exit=0),
    "caps_stack_depot": dict(
        program="caps", args=["stacks"], options="stack_depot_max=4k",
        kinds={"out-of-bounds": 1}, explained=1,
        fields={"out-of-bounds": {"bytes": 8192, "overrun": 4096, "alloc.size": 4096}},
        stdout_has=["stacks done"], stderr_has=["stack not recorded (stack_depot_max reached)"],
        stderr_once=["hipshadow: WARNING", "hipshadow: WARNING: stack_depot_max=4096 reached"], exit=0),
    "caps_ledger": dict(
        program="caps", args=["ledger"], options="ledger_size=4:ledger_max=10",
        kinds={}, stdout_has=["host functions ran 30 times"],
        stderr_once=["hipshadow: WARNING", "hipshadow: WARNING: ledger_max=10 reached"], exit=0),
    # Rings of 16384 launches (7.5 MiB each): the first is carved from the hot region
    # (process/hot_memory.c), the others are malloc'd; the program runs on and no cap is said.
    "caps_hot_region_spent": dict(
        program="caps", args=["ledger"], options="ledger_size=16384:ledger_max=100000",
        kinds={}, stdout_has=["host functions ran 30 times"], stderr_lacks=["hipshadow: WARNING"], exit=0),
    "caps_events": dict(
        program="caps", args=["events"], options="events_max=4",
        kinds={}, stdout_has=["events done"],
        stderr_once=["hipshadow: WARNING", "hipshadow: WARNING: events_max=4 reached"], exit=0),
    # 2M pairs here (about 6 s); tools/bench.sh rss runs 10M.  The warm-up (1M pairs, 4 GiB of
    # the simulator's never-reused address space) lets the page map's ring of emptied leaves fill;
    # past it 40-170 KiB of growth was measured over the next 1M pairs.  The bound is 512 KiB.
    "rss_flat_alloc_free": dict(
        program="alloc_free_rss", args=["2000000", "1000000", "512"], kinds={},
        stdout_has=["rss: warm-up"], exit=0),
    "clean_events": dict(program="clean_events", kinds={}, stdout_has=["events clean"], exit=0),
    "clean_double_buffer": dict(program="clean_double_buffer", kinds={},
                                stdout_has=["double buffer: last value 199"], exit=0),
    "clean_pool_regions": dict(program="pool_regions", args=["clean"], kinds={}, stdout_has=["pool read back"], exit=0),
    "seed000_region_overrun": dict(
        program="pool_regions", args=["overrun"],
        kinds={"region-overrun": 1},
        fields={"region-overrun": {"overrun": 4096, "bytes": 896 * 151936 * 4 + 4096, "alloc.size": 1024 * 1024 * 1024,
                                   "alloc.offset": 4096 + 3211264, "api": "hipMemcpyDtoH"}},
        stderr_has=["past the end of region 'token_embd.weight' (pool offset 3215360, 544538624 bytes)",
                    "named 'weights pool #0'"], exit=0),
    "fallback_rescues_rejected_d2h": dict(
        program="fallback_stage", args=["ok"], options="fallback=stage", env={"SIMHIP_REJECT_INTERIOR_D2H": "1"},
        kinds={"runtime-error": 1},
        fields={"runtime-error": {"action": "fallback", "severity": "warning", "alloc.offset": 12345}},
        stdout_has=["read-back: hipSuccess, data right"],
        stderr_has=["hipshadow staged it through its own GPU kernel"], exit=0),
    "rejected_d2h_without_fallback": dict(
        program="fallback_stage", args=["ok"], env={"SIMHIP_REJECT_INTERIOR_D2H": "1"},
        kinds={"runtime-error": 1}, fields={"runtime-error": {"action": "forwarded"}},
        stdout_has=["read-back: hipErrorInvalidValue"], exit=1),
    "fallback_never_rescues_out_of_bounds": dict(
        program="fallback_stage", args=["oob"], options="fallback=stage", env={"SIMHIP_REJECT_INTERIOR_D2H": "1"},
        kinds={"out-of-bounds": 1}, explained=1, fields={"out-of-bounds": {"action": "forwarded"}},
        stdout_has=["read-back: hipErrorInvalidValue"], exit=1),
    "fallback_always_stages": dict(
        program="fallback_stage", args=["ok"], options="fallback=stage:fallback_always=1",
        env={"SIMHIP_TRACE": "1"}, kinds={},
        stdout_has=["read-back: hipSuccess, data right"],
        stderr_has=["simhip: hipModuleLoadData", "simhip: hipModuleLaunchKernel"],
        stderr_lacks=["simhip: hipMemcpyDtoH"], exit=0),
    "transpose_api": dict(
        program="transpose_api", kinds={}, stdout_has=["transpose: 35 of 35 right; elem_size 3 -> 1"], exit=0),
    "transpose_api_without_preload": dict(
        program="transpose_api", no_preload=True, kinds={},
        stdout_has=["hipshadow is not loaded: hipshadow_transpose2d returned -1"], exit=0),
}


def get(obj, dotted):
    """A field by its dotted path; a number indexes a list ("kernels.0.args.1.state"); a path
    ending in "#" gives a list's length ("kernels.#")."""
    for part in dotted.split("."):
        if obj is None:
            return None
        if part == "#":
            return len(obj)
        obj = obj[int(part)] if isinstance(obj, list) else obj.get(part)
    return obj


def main():
    name = sys.argv[1]
    case = CASES[name]
    launcher, cases_dir, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for fname, text in case.get("files", {}).items():
            with open(os.path.join(tmp, fname), "w") as f:
                f.write(text)
        for link, target in case.get("symlinks", {}).items():
            os.symlink(target.replace("@TMP@", tmp), os.path.join(tmp, link))
        findings = os.path.join(tmp, "findings.%p.json")
        opts = ["--findings", findings]
        for kv in filter(None, case.get("options", "").replace("@TMP@", tmp).split(":")):
            opts += ["--option", kv]
        args = [a.replace("@CASES@", cases_dir).replace("@TMP@", tmp) for a in case.get("args", [])]
        env = dict(os.environ, LD_LIBRARY_PATH=simhip, **case.get("env", {}))
        env.pop("HIPSHADOW_OPTIONS", None)
        cmd = [launcher] + opts + ["--", os.path.join(cases_dir, case["program"])] + args
        if case.get("no_preload"):
            cmd = cmd[cmd.index("--") + 1:]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        if proc.returncode == 77 and case.get("exit") != 77:
            print(f"SKIP: {case['program']} says it cannot run here (exit 77)")
            sys.exit(77)

        files = sorted(f for f in os.listdir(tmp) if f.startswith("findings."))
        records = []
        for fname in files:
            with open(os.path.join(tmp, fname)) as f:
                for line in f:
                    records.append(json.loads(line))
        if case.get("processes") and len(files) != case["processes"]:
            failures.append(f"expected {case['processes']} findings files (one per process), got {files}")

        got = {}
        for r in records:
            got[r["kind"]] = got.get(r["kind"], 0) + 1
            if set(r) - OPTIONAL_FIELDS != CONTRACT_FIELDS:
                failures.append(f"fields {sorted((set(r) - OPTIONAL_FIELDS) ^ CONTRACT_FIELDS)} differ from the contract")
        if got != case["kinds"]:
            failures.append(f"kinds: expected {case['kinds']}, got {got}")
        for kind, expect in case.get("fields", {}).items():
            for r in (r for r in records if r["kind"] == kind):
                for key, want in expect.items():
                    if get(r, key) != want:
                        failures.append(f"{kind}.{key}: expected {want!r}, got {get(r, key)!r}")
        for kind, alternatives in case.get("field_sets", {}).items():
            rows = [r for r in records if r["kind"] == kind]
            for expect in alternatives:
                if not any(all(get(r, k) == v for k, v in expect.items()) for r in rows):
                    failures.append(f"no {kind} finding matches {expect}")
        stackless = [r["kind"] for r in records if r["kind"] != "leak" and not r["stack"]]
        if len(stackless) != case.get("stackless", 0):  # findings made where no stack could be walked
            failures.append(f"findings without a stack: expected {case.get('stackless', 0)}, got {stackless}")
        for text in case.get("stderr_has", []):
            if text.replace("@TMP@", tmp) not in proc.stderr:
                failures.append(f"stderr lacks {text!r}")
        for text in case.get("stderr_once", []):  # one clear message: said exactly once
            n = proc.stderr.count(text.replace("@TMP@", tmp))
            if n != 1:
                failures.append(f"stderr has {text!r} {n} times, expected once")
        for fname in case.get("empty_after", []):  # a file hipshadow must not have written through a link
            if os.path.getsize(os.path.join(tmp, fname)) != 0:
                failures.append(f"{fname} was written to")
        for fname in case.get("exists_after", []):
            if not os.path.exists(os.path.join(tmp, fname)):
                failures.append(f"{fname} was not created")
        for text in case.get("stderr_lacks", []):
            if text in proc.stderr:
                failures.append(f"stderr has {text!r}")
        for text, want in case.get("stderr_count", {}).items():
            if proc.stderr.count(text) != want:
                failures.append(f"stderr has {text!r} {proc.stderr.count(text)} times, not {want}")
        for text in case.get("stdout_has", []):
            if text not in proc.stdout:
                failures.append(f"stdout lacks {text!r}")
        if case.get("stdout_as_plain"):  # every answer the program got is the runtime's own
            plain = subprocess.run(cmd[cmd.index("--") + 1:], env=env, capture_output=True, text=True, timeout=600)
            if plain.stdout != proc.stdout:
                failures.append(f"stdout differs from the program's without the preload:\n{plain.stdout}")
        for text in case.get("stdout_lacks", []):
            if text in proc.stdout:
                failures.append(f"stdout has {text!r}")
        at = 0
        for text in case.get("stderr_after", []):  # these texts, in this order
            found = proc.stderr.find(text, at)
            if found < 0:
                failures.append(f"stderr lacks {text!r} after the text before it")
            at = max(at, found)
        if "report_file_has" in case:
            reports = [f for f in os.listdir(tmp) if f.startswith("report.")]
            content = "".join(open(os.path.join(tmp, f)).read() for f in reports)
            for text in case["report_file_has"]:
                if text not in content:
                    failures.append(f"report file lacks {text!r}")
        if "explained" in case:  # refusals said with the error found before them on the call, not counted again
            reports = [f for f in os.listdir(tmp) if f.startswith("report.")]
            n = len(EXPLAINED.findall(proc.stderr + "".join(open(os.path.join(tmp, f)).read() for f in reports)))
            if n != case["explained"]:
                failures.append(f"runtime refusals explained by a finding: expected {case['explained']}, got {n}")
        if proc.returncode != case["exit"]:
            failures.append(f"exit status: expected {case['exit']}, got {proc.returncode}")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
