#!/bin/bash
# Three cluster nodes from the same jar, idle: each node's per-thread CPU over 30 s, from 100 s
# after their start.   idle.sh JAR LABEL   (node configs n0.conf..n2.conf beside this script)
cd "$(dirname "$0")"  # data0..2 and the logs are written beside this script
jar=$1 label=$2
rm -rf data0 data1 data2
pids=()
for i in 0 1 2; do java -XX:ActiveProcessorCount=1 -Xms1g -Xmx1g -jar "$jar" serve --config n$i.conf > log-$label-$i 2>&1 & pids+=($!); done
sleep 100
probes=()
for i in 0 1 2; do python3 ../../../profile/thread_cpu.py ${pids[$i]} 30 > idle-$label-node-$i.txt & probes+=($!); done
wait "${probes[@]}"
kill "${pids[@]}"
for p in "${pids[@]}"; do while kill -0 $p 2>/dev/null; do sleep 0.5; done; done
