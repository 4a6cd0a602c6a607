// Piscina worker for the benchmark: pool.run([a, b]) -> a + b.
export default function add([a, b]) {
  return a + b;
}
