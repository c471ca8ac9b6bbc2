// Preloaded (NODE_OPTIONS --import, bench/cleanup.ts) into the Node processes a benchmark
// starts. When the bench process dies without stopping them (SIGKILL, a crash), they are
// re-parented; each then stops itself as on SIGTERM instead of running on, holding ports,
// databases and data directories. Plain JavaScript: it loads before tsx.
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
  // A process whose SIGTERM handler never finishes still goes.
  setTimeout(() => process.exit(1), 10_000).unref();
}, 1_000);
watch.unref();
