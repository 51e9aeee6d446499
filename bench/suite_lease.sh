#!/bin/bash
# One whole LIBERO suite-run on the GPU machine with the LIBERO-Spatial headline's settings: the 7B stand-in
# (bench/llama_policy.py, backbone lean-compiled) served by rlinf-bench serve-policy on 1 core, a worker per
# remaining core (30 on 16 cores), 8 requests in flight, batches up to 16, 10 tasks x 50 initial states, every
# episode to the suite's OpenVLA-OFT horizon (bench/eval_gpu.py's default: 220/280/300/520/400) with 10 settle
# steps. The stand-in scores 0, so no episode ends early: an upper bound for any policy.
# Carry .gl and .gpu_bundle_SUITE (.venv/bin/python bench/gpu_bundle.py --suite SUITE --out .gpu_bundle_SUITE);
# a bundle in parts (libero_10) is installed part by part first: `source bench/gpu_setup.sh .gpu_bundle_SUITE
# /tmp/site_SUITE` in each call that carries one, then this script once every part is in.
# Usage, from the repository root, detached (a suite-run can outlast one device call), then polled:
#   mkdir -p /tmp/lease; setsid nohup bash bench/suite_lease.sh SUITE TAG > /tmp/lease/SUITE_TAG.log 2>&1 < /dev/null &
#   bash bench/suite_lease.sh --wait SUITE TAG 560   # in the same or the next call: up to 560 s, then the log's end
# The result is /tmp/lease/suite_SUITE_TAG.json (bench/eval_gpu.py's format, "suite_7b" and "suite_wall_s");
# bench/gpu_suites.py folds such files into bench/results/gpu_suites.json.
set -u
if [ "${1:-}" = --wait ]; then  # wait for a detached run to end, at most $4 seconds; print its log's end
  suite=$2 tag=$3 limit=${4:-560}
  pid=$(cat "/tmp/lease/${suite}_$tag.pid" 2>/dev/null || echo 0)
  for ((i = 0; i < limit; i += 5)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 5
  done
  tail -n 6 "/tmp/lease/${suite}_$tag.log"
  kill -0 "$pid" 2>/dev/null && echo "suite_lease: $suite $tag still running" || echo "suite_lease: $suite $tag ended"
  exit 0
fi
suite=$1 tag=$2
mkdir -p /tmp/lease && echo $$ > "/tmp/lease/${suite}_$tag.pid"
source bench/gpu_setup.sh ".gpu_bundle_$suite" "/tmp/site_$suite" || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
date -u +"lease clock %F %T UTC: $suite $tag starts"
python3 bench/eval_gpu.py --parts suite --suite "$suite" --workers "${WORKERS:-auto}" --server-cores 1 --inflight 8 \
  --server-args '--max-batch 16' --trials "${TRIALS:-50}" --timeout "${TIMEOUT:-1200}" \
  --policy-options "backbone=${BACKBONE:-lean-compiled}${POLICY_OPTIONS:+&$POLICY_OPTIONS}" \
  ${MAX_STEPS:+--max-steps "$MAX_STEPS"} ${RESOLUTION:+--resolution "$RESOLUTION"} \
  --work "/tmp/suite_${suite}_$tag" --out "/tmp/lease/suite_${suite}_$tag.json"
date -u +"lease clock %F %T UTC: $suite $tag done"
