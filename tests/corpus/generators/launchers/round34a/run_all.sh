#!/bin/bash
# Reproduce every round-34a case: healthy jobs that look alarming, and failures that look like them (job.py --mode).
# CPU, gloo, PG timeout 15 s, tiny DDP model, 8 steps. Launchers: torchrun (c10d, standalone port per case) and
# torch.multiprocessing.spawn (job.py --spawn N). Two cases run at once (2 cores).
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage34, VENV to /work/helpers/venv34a.
set -u
export HERE="$(cd "$(dirname "$0")" && pwd)"
export VENV="${VENV:-/work/helpers/venv34a}"
export OUT="${OUT:-/work/helpers/stage34}"
export META="${META:-/work/helpers/stage34a.meta}"   # command + exit code per case (kept out of case folders)
export WROOT="${WROOT:-/tmp/w34a}"                   # job dirs, rewritten to /home/user/job in log.txt
# case id -> "launcher | world | --mode | fault rank | step | extra launcher args | extra env (k=v ...)"
declare -A C=(
 [run34a-torchrun-thread-upload-healthy]="torchrun|3|thread_upload|1|4||"
 [run34a-spawn-thread-upload-healthy]="spawn|4|thread_upload|2|4||"
 [run34a-torchrun-loader-skip-healthy]="torchrun|3|loader_skip|2|4||"
 [run34a-spawn-loader-skip-healthy]="spawn|3|loader_skip|1|4||"
 [run34a-torchrun-retry-ok-healthy]="torchrun|4|retry_ok|3|4||"
 [run34a-torchrun-autobatch-ok-healthy]="torchrun|3|autobatch_ok|-1|4||"
 [run34a-torchrun-warnings-noise-healthy]="torchrun|3|warnings_noise|-1|4||TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO"
 [run34a-torchrun-faulthandler-slow-healthy]="torchrun|3|faulthandler_slow|2|4||"
 [run34a-spawn-profiler-json-healthy]="spawn|3|profiler_json|-1|4||"
 [run34a-torchrun-metric-names-healthy]="torchrun|4|metric_names|-1|4||"
 [run34a-torchrun-restart-ok-healthy]="torchrun|3|restart_ok|1|3|--standalone --max-restarts 1|"
 [run34a-torchrun-exit-ignored-healthy]="torchrun|3|exit_ignored|-1|4||"
 [run34a-torchrun-ckpt-upload-warn-healthy]="torchrun|4|ckpt_upload_warn|3|5||"
 [run34a-torchrun-recompile-warn-healthy]="torchrun|3|recompile_warn|-1|4||"
 [run34a-torchrun-graph-break-warn-healthy]="torchrun|3|graph_break_warn|-1|4||TORCH_LOGS=graph_breaks"
 [run34a-torchrun-thread-fatal]="torchrun|3|thread_fatal|2|4||"
 [run34a-spawn-loader-fatal]="spawn|3|loader_fatal|1|4||"
 [run34a-torchrun-retry-fail]="torchrun|4|retry_fail|2|4||"
 [run34a-torchrun-autobatch-fail]="torchrun|3|autobatch_fail|1|4||"
 [run34a-torchrun-warnings-hang]="torchrun|3|warnings_hang|2|3||TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO"
 [run34a-torchrun-faulthandler-kill]="torchrun|4|faulthandler_kill|3|3||"
 [run34a-torchrun-restart-fail]="torchrun|3|restart_fail|1|3|--standalone --max-restarts 1|"
 [run34a-torchrun-exit-ignored-fatal]="torchrun|3|exit_ignored_fatal|2|4||"
 [run34a-torchrun-mismatch-noise]="torchrun|3|mismatch_noise|1|4||"
 [run34a-torchrun-nan-exit1]="torchrun|4|nan_exit1|2|3||"
 [run34a-spawn-validate-exit2]="spawn|3|validate_exit2|1|5||"
)
ORDER="run34a-torchrun-thread-upload-healthy run34a-spawn-thread-upload-healthy run34a-torchrun-loader-skip-healthy
 run34a-spawn-loader-skip-healthy run34a-torchrun-retry-ok-healthy run34a-torchrun-autobatch-ok-healthy
 run34a-torchrun-warnings-noise-healthy run34a-torchrun-faulthandler-slow-healthy run34a-spawn-profiler-json-healthy
 run34a-torchrun-metric-names-healthy run34a-torchrun-restart-ok-healthy run34a-torchrun-exit-ignored-healthy
 run34a-torchrun-ckpt-upload-warn-healthy run34a-torchrun-recompile-warn-healthy run34a-torchrun-graph-break-warn-healthy
 run34a-torchrun-thread-fatal run34a-spawn-loader-fatal run34a-torchrun-retry-fail run34a-torchrun-autobatch-fail
 run34a-torchrun-warnings-hang run34a-torchrun-faulthandler-kill run34a-torchrun-restart-fail
 run34a-torchrun-exit-ignored-fatal run34a-torchrun-mismatch-noise run34a-torchrun-nan-exit1 run34a-spawn-validate-exit2"

one() {  # run one case into $OUT/<id>/log.txt
  local id="$1" PORT i=0 la world mode fr step largs envs
  IFS='|' read -r la world mode fr step largs envs <<< "${C[$id]}"
  for x in $ORDER; do [ "$x" = "$id" ] && PORT=$((29600 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job"
  rm -rf "$W"; mkdir -p "$W" "$OUT/$id"; cp "$HERE/job.py" "$W/"
  largs="${largs//@PORT@/$PORT}"
  local jargs=(--mode "$mode" --fault-rank "$fr" --step "$step") cmd
  case "$la" in
    torchrun) cmd=("$VENV/bin/torchrun" --nproc-per-node "$world" $([ -z "$largs" ] && echo --master-port "$PORT") $largs job.py "${jargs[@]}") ;;
    spawn) cmd=("$VENV/bin/python" job.py --spawn "$world" "${jargs[@]}") ;;
  esac
  ( cd "$W" && env MASTER_PORT="$PORT" $envs timeout -k 10 180 "${cmd[@]}" > "$OUT/$id/log.txt" 2>&1 ); local rc=$?
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$OUT/$id/log.txt"
  echo "$id rc=$rc cmd: ${envs:+$envs }${cmd[*]}" | sed -e "s#$VENV#/opt/venv#g" >> "$META"
  echo "$id rc=$rc"
  rm -rf /tmp/r34a-scratch-* "$W"
}
export -f one
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
# bash can't export arrays: pass the table through a file for the parallel workers
declare -p C > "$WROOT.table" 2>/dev/null || { mkdir -p "$(dirname "$WROOT")"; declare -p C > "$WROOT.table"; }
export ORDER
printf '%s\n' "${CASES[@]}" | xargs -P 2 -I{} bash -c 'source "$WROOT.table"; one "$1"' _ {}
# no orphans: kill (by pid) any process still running in one of this round's job dirs
for d in /proc/[0-9]*; do
  case "$(readlink "$d/cwd" 2>/dev/null)" in "$WROOT"/*) echo "killing leftover ${d#/proc/}"; kill -9 "${d#/proc/}" 2>/dev/null ;; esac
done
