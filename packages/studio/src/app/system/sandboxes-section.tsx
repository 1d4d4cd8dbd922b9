import type { RuntimeView, SandboxView } from "../api/api-types.js";

/** `engineVersion` → "engine version". */
function factLabel(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

function factValue(value: RuntimeView["details"][string]): string {
  if (value === null) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

/** Each runtime the host has: its facts and its pools (size, idle, busy, max), as tables. */
export function SandboxRuntimes({ sandbox }: { sandbox: SandboxView }) {
  if (sandbox.runtimes.length === 0) return <p class="empty">The host reports no runtime.</p>;
  return (
    <>
      {sandbox.runtimes.map((runtime) => (
        <RuntimeCard key={runtime.name} runtime={runtime} />
      ))}
    </>
  );
}

function RuntimeCard({ runtime }: { runtime: RuntimeView }) {
  const headingId = `runtime-${runtime.name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
  const facts = Object.entries(runtime.details);
  return (
    <section class="card system-runtime" aria-labelledby={headingId} data-runtime={runtime.name}>
      <h3 id={headingId}>
        Runtime <code>{runtime.name}</code>
      </h3>
      {facts.length === 0 ? (
        <p class="empty">No details reported.</p>
      ) : (
        <table aria-label={`Details of ${runtime.name}`} class="system-facts">
          <tbody>
            {facts.map(([key, value]) => (
              <tr key={key} data-fact={key}>
                <th scope="row">{factLabel(key)}</th>
                <td>{factValue(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {runtime.pools.length === 0 ? (
        <p class="empty">No pools: it keeps no ready workers or warm sandboxes.</p>
      ) : (
        <table aria-label={`Pools of ${runtime.name}`}>
          <thead>
            <tr>
              <th scope="col">Pool</th>
              <th scope="col" class="number">
                Size
              </th>
              <th scope="col" class="number">
                Idle
              </th>
              <th scope="col" class="number">
                Busy
              </th>
              <th scope="col" class="number">
                Max
              </th>
            </tr>
          </thead>
          <tbody>
            {runtime.pools.map((pool) => (
              <tr key={pool.name} data-pool={pool.name}>
                <th scope="row">{pool.name}</th>
                <td class="number">{pool.size}</td>
                <td class="number">{pool.idle}</td>
                <td class="number">{pool.busy}</td>
                <td class="number">{pool.max ?? "no limit"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
