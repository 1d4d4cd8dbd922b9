/**
 * The database's clock in ms since the epoch, as SQL: every stamp and comparison of leases,
 * deadlines and heartbeats uses it, never a host's clock (hosts disagree; the database is one).
 * `clock_timestamp()`, not `now()`: `now()` stays at the transaction's start, and a long
 * transaction must not stamp a lease that is already old. Floored, as SQLite's `CAST` truncates.
 */
export const DATABASE_NOW = "floor(extract(epoch from clock_timestamp()) * 1000)::bigint";
