// Not used in the sandbox (the skill runs `sandbox.command`); the manifest's `handler` field
// points here so the package is also readable by hosts without the container runtime.
export default function shout(input) {
  return { shouted: String(input.msg).toUpperCase() };
}
