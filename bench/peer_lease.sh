#!/bin/bash
# Issue 25's side by side on the GPU machine, in one call: our served suite run and vla-eval's on the same
# work (10 tasks x TRIALS initial states of libero_spatial, 220 steps, the 7B stand-in, 15 cores for the
# rollouts and 1 for the model server), one after the other; ORDER picks which goes first.
# Carry .gl, .gpu_bundle (bench/gpu_bundle.py) and .whl (vla_eval-0.8.0 and lazyregistry-0.4.0, pure wheels).
# Usage, from the repository root:
#   bash bench/peer_lease.sh TAG TRIALS [ours-first|peer-first|twice-then-peer|twice-then-renders|smoke]
# twice-then-peer runs ours twice (the suite pair the goals ask for, ours_TAG1 and ours_TAG2) and then vla-eval
# once on the same work: every figure issue 25 still needs, in one lease (~1,500 s at 500 episodes).
# twice-then-renders runs ours twice and then bench/render_contention.py beside the forward: LIBERO-Spatial's
# scene with and without MuJoCo's mirror pass (~800 s in all).
# BACKBONE (default hf, the earlier pairs' stand-in) picks bench/llama_policy.py's backbone for both sides;
# WORKERS (default auto: a worker per rollout core) and SHARDS (default 15) size each side.
# A pair longer than one device call (500 episodes: vla-eval alone ~1,200 s at 15 shards) runs detached and is
# polled; each result file is in /tmp/lease as soon as its run ends, so a poll keeps what finished:
#   mkdir -p /tmp/lease; OUT=/tmp/lease BACKBONE=lean-compiled WORKERS=30 SHARDS=30 PEER_ARGS="--timeout 1300" \
#     setsid nohup bash bench/peer_lease.sh G 50 twice-then-peer > /tmp/lease/G.log 2>&1 < /dev/null &
# then, in the next calls, back to back: sleep 540; tail -n 3 /tmp/lease/G.log; cp /tmp/lease/*.json "$OUT"/
set -u
tag=$1 trials=$2 order=${3:-ours-first} backbone=${BACKBONE:-hf}
source bench/gpu_setup.sh "${BUNDLE:-.gpu_bundle}"  # a sourced script sees our arguments unless given its own
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/peer .whl/*.whl || exit 1
export PYTHONPATH=/tmp/peer${PYTHONPATH:+:$PYTHONPATH}
date -u +"lease clock %F %T UTC"
ours() {  # $1: a suffix for the result file, when ours runs more than once
  python3 bench/eval_gpu.py --parts suite --workers "${WORKERS:-auto}" --server-cores 1 --inflight 8 --server-args '--max-batch 16' \
    --trials "$trials" --timeout 540 --policy-options "backbone=$backbone" --work "/tmp/ours_$tag${1:-}" \
    --out "$OUT/ours_$tag${1:-}.json"
  date -u +"lease clock %F %T UTC: ours${1:-} done"
}
# PEER_ARGS: more bench/peer_vla_eval.py options, e.g. PEER_ARGS="--timeout 170" to bound a short lease
peer() {
  python3 bench/peer_vla_eval.py --shards "${SHARDS:-15}" --server-cores 1 --trials "$trials" --out "$OUT/vla_$tag.json" \
    --policy-args "backbone=$backbone" ${PEER_ARGS:-} "$@"
}
# what the renders cost the forward, with and without the stove's mirror pass (the pass: docs/performance.md,
# "What one render draws")
renders() {
  python3 bench/render_contention.py --load forward --scenes 30 --seconds 10 --rounds 2 --layouts none,procs \
    --mirrors drawn,skipped --out "$OUT/renders_spatial_$tag.json"
  date -u +"lease clock %F %T UTC: renders done"
}
case $order in
  smoke) peer --work /tmp/smoke; tail -n 30 /tmp/smoke/shard_0.log; tail -n 5 /tmp/smoke/server.log ;;
  peer-first) peer; ours ;;
  twice-then-peer) ours 1; ours 2; peer ;;
  twice-then-renders) ours 1; ours 2; renders ;;
  *) ours; peer ;;
esac
date -u +"lease clock %F %T UTC"
