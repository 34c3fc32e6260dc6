import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyMigrations, type Migration, schemaVersion } from "../../src/objects/migrations.ts";
import { RUN_MIGRATIONS } from "../../src/objects/run-schema.ts";
import { STREAM_MIGRATIONS } from "../../src/objects/stream-schema.ts";
import { TENANT_INDEX_MIGRATIONS } from "../../src/objects/tenant-index-schema.ts";
import { shardLayout, shardName, shardOf } from "../../src/objects/tenant-index-shards.ts";
import { allEvents, call, createRun, getRun, json, KEY_B, runnerTranscript, runObject, timers } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";
import { revertBlocksMigration } from "./log-rows.ts";
import { lose, runWith, session } from "./recovery-helpers.ts";
import { agentEvent, claim, connectRunner } from "./sockets.ts";

/** The next migration a later issue might ship: a column and a table, added. */
const NEXT_RUN_MIGRATION: Migration = {
  version: RUN_MIGRATIONS.length + 1,
  name: "test: command notes",
  sql: "ALTER TABLE commands ADD COLUMN note TEXT; CREATE TABLE IF NOT EXISTS run_notes (note TEXT NOT NULL);",
};

/** A run with events, commands in several states, a pending approval and its timers. */
async function busyRun() {
  const created = await createRun({ timeouts: { approvalMs: 60_000, heartbeatMs: 600_000 } });
  const runId = created.run.id;
  const first = await claim(runId, created.runnerToken, "first");
  const post = (body: unknown) => call(`/v1/runs/${runId}/commands`, { method: "POST", json: body });
  await json(await post({ commandId: "delivered-then-unknown", type: "input", text: "a" }), 201);
  await first.runner.next("command");
  const second = await claim(runId, created.runnerToken, "second");
  second.runner.send({
    type: "events",
    epoch: second.epoch,
    events: [agentEvent(1), agentEvent(2), agentEvent(3, "approval.requested", { requestId: "req-1" })],
  });
  await second.runner.next("ack");
  await json(await post({ commandId: "delivered", type: "interrupt" }), 201);
  await second.runner.next("command");
  second.runner.close();
  await waitFor("the runner to be disconnected", async () => !(await getRun(runId)).runner.connected, 5_000);
  await json(await post({ commandId: "queued", type: "input", text: "b" }), 201);
  return runId;
}

async function snapshot(runId: string) {
  const commands = await runInDurableObject(runObject(runId), (_instance, state) =>
    state.storage.sql.exec("SELECT command_id, controller_seq, state FROM commands ORDER BY controller_seq").toArray(),
  );
  return { run: await getRun(runId), events: await allEvents(runId), commands, timers: await timers(runId) };
}

/**
 * Turns an object of the current schema into one written by schema version 1 exactly: the later
 * tables and columns dropped, only migration 1 recorded (or none: `withMigrations: false`).
 */
function revertToVersion1(sql: SqlStorage, withMigrations = true): void {
  revertBlocksMigration(sql, 9);
  revertUsageMigration(sql);
  revertClaimAllowance(sql);
  revertPoolMigration(sql);
  revertMigration5(sql);
  for (const table of ["recovery_decisions", "checkpoint", "checkpoint_uploads", "checkpoint_chunks"]) {
    sql.exec(`DROP TABLE ${table}`);
  }
  for (const column of ["generation", "native_session", "recovery", "recovery_episode"]) {
    sql.exec(`ALTER TABLE run DROP COLUMN ${column}`);
  }
  sql.exec("ALTER TABLE commands DROP COLUMN generation");
  sql.exec("ALTER TABLE approvals DROP COLUMN generation");
  sql.exec(
    "CREATE INDEX log_entries_by_producer ON log_entries (producer_id, producer_seq) WHERE producer_id IS NOT NULL",
  );
  if (withMigrations) sql.exec("DELETE FROM schema_migrations WHERE version > 1");
  else sql.exec("DROP TABLE schema_migrations");
}

/** Undoes migration 8 (usage totals, budgets and tags). */
function revertUsageMigration(sql: SqlStorage): void {
  sql.exec("DROP TABLE usage_totals");
  sql.exec("DROP TABLE usage_days");
  sql.exec("ALTER TABLE run DROP COLUMN tags");
  sql.exec("ALTER TABLE run DROP COLUMN budget");
}

/** Undoes migration 7 (the claim-rate allowance). */
function revertClaimAllowance(sql: SqlStorage): void {
  sql.exec("ALTER TABLE run DROP COLUMN claim_tokens");
  sql.exec("ALTER TABLE run DROP COLUMN claim_tokens_at");
}

/** Undoes migration 6 (pool runs and the outbox), as a run written before it had it. */
function revertPoolMigration(sql: SqlStorage): void {
  sql.exec("DROP TABLE outbox");
  for (const column of ["queue", "recovery_policy", "max_recoveries", "auto_recoveries"]) {
    sql.exec(`ALTER TABLE run DROP COLUMN ${column}`);
  }
}

/**
 * Undoes migration 5's columns, for tests that replay an older one. Its `run_tokens` table stays
 * (the migration creates it IF NOT EXISTS): the tokens these tests minted carry ids, which an
 * object from before migration 5 never issued, and they must keep working for the test to go on.
 */
function revertMigration5(sql: SqlStorage): void {
  sql.exec("ALTER TABLE run DROP COLUMN status_version");
  sql.exec("ALTER TABLE run DROP COLUMN legacy_tokens_revoked_at");
}

const columnsOf = (sql: SqlStorage, table: string) =>
  sql
    .exec<{ name: string }>(`PRAGMA table_info(${table})`)
    .toArray()
    .map((column) => column.name);

describe("schema migrations", () => {
  it("a run object records the schema version it was created with", async () => {
    const { run } = await createRun();
    const version = await runInDurableObject(runObject(run.id), (_instance, state) => schemaVersion(state.storage.sql));
    expect(version).toBe(RUN_MIGRATIONS.length);
  });

  it("an object written by the current schema takes a new migration and keeps every event, command and timer", async () => {
    const runId = await busyRun();
    const before = await snapshot(runId);
    expect(before.events.length).toBeGreaterThan(5);
    expect(before.commands.map((c) => c.state)).toEqual(["unknown", "delivered", "queued"]);
    expect(before.timers.map((t) => t.kind)).toEqual(["approval", "deadline", "idle", "lease"]);

    const columns = await runInDurableObject(runObject(runId), (_instance, state) => {
      applyMigrations(state.storage, [...RUN_MIGRATIONS, NEXT_RUN_MIGRATION]);
      return { version: schemaVersion(state.storage.sql), commands: columnsOf(state.storage.sql, "commands") };
    });
    expect(columns.version).toBe(NEXT_RUN_MIGRATION.version);
    expect(columns.commands).toContain("note");
    expect(await snapshot(runId)).toEqual(before);
  });

  it("migrations already applied are not applied again on wake", async () => {
    const runId = await busyRun();
    await runInDurableObject(runObject(runId), (_instance, state) => {
      applyMigrations(state.storage, [...RUN_MIGRATIONS, NEXT_RUN_MIGRATION]);
      state.storage.sql.exec("INSERT INTO run_notes (note) VALUES ('kept')");
    });
    const before = await snapshot(runId);
    await evictDurableObject(runObject(runId), { webSockets: "close" });
    const notes = await runInDurableObject(runObject(runId), (_instance, state) => {
      // Waking ran the class's own list; a second pass over the longer one finds nothing to do.
      applyMigrations(state.storage, [...RUN_MIGRATIONS, NEXT_RUN_MIGRATION]);
      return state.storage.sql.exec("SELECT note FROM run_notes").toArray();
    });
    expect(notes).toEqual([{ note: "kept" }]);
    expect(await snapshot(runId)).toMatchObject({ events: before.events, commands: before.commands });
  });

  it("an object created before migrations existed is migrated from version 1 on wake, its data intact", async () => {
    const runId = await busyRun();
    const before = await snapshot(runId);
    await runInDurableObject(runObject(runId), (_instance, state) => revertToVersion1(state.storage.sql, false));
    await evictDurableObject(runObject(runId), { webSockets: "close" });
    const applied = await runInDurableObject(runObject(runId), (_instance, state) =>
      state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version").toArray(),
    );
    expect(applied.map((row) => row.version)).toEqual(RUN_MIGRATIONS.map((migration) => migration.version));
    const after = await snapshot(runId);
    expect(after.events).toEqual(before.events);
    expect(after.commands).toEqual(before.commands);
    expect(after.timers).toEqual(before.timers);
  });

  it("an object of schema version 1 drops its producer index on wake and still recognises resent events", async () => {
    const { run, runnerToken } = await createRun();
    const first = await claim(run.id, runnerToken, "first");
    first.runner.send({ type: "events", epoch: first.epoch, events: [1, 2, 3].map((n) => agentEvent(n)) });
    await first.runner.next("ack");
    first.runner.close();
    // As version 1 left it: the index on every entry's producer stamp, and only migration 1 recorded.
    await runInDurableObject(runObject(run.id), (_instance, state) => revertToVersion1(state.storage.sql));
    await evictDurableObject(runObject(run.id), { webSockets: "close" });
    const woken = await runInDurableObject(runObject(run.id), (_instance, state) => ({
      version: schemaVersion(state.storage.sql),
      indexes: state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'log_entries'")
        .toArray()
        .map((row) => row.name),
    }));
    expect(woken).toEqual({ version: RUN_MIGRATIONS.length, indexes: [] });

    const second = await claim(run.id, runnerToken, "second");
    second.runner.send({ type: "events", epoch: second.epoch, events: [2, 3, 4].map((n) => agentEvent(n)) });
    expect(await second.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 4 });
    second.runner.send({ type: "events", epoch: second.epoch, events: [agentEvent(2, "TEXT_MESSAGE_CONTENT", "x")] });
    expect(await second.runner.next("conflict")).toEqual({ type: "conflict", sourceSeq: 2 });
    expect(await runnerTranscript(run.id)).toEqual(
      [1, 2, 3, 4].map((n) => [n, "TEXT_MESSAGE_CONTENT", { delta: `chunk ${n}` }]),
    );
  });

  it("an object with only schema version 1 takes the recovery migration and runs on as generation 1", async () => {
    const runId = await busyRun();
    const before = await snapshot(runId);
    await runInDurableObject(runObject(runId), (_instance, state) => revertToVersion1(state.storage.sql));
    await evictDurableObject(runObject(runId), { webSockets: "close" });
    const woken = await runInDurableObject(runObject(runId), (_instance, state) => ({
      version: schemaVersion(state.storage.sql),
      run: columnsOf(state.storage.sql, "run"),
      chunks: columnsOf(state.storage.sql, "checkpoint_chunks"),
    }));
    expect(woken.version).toBe(RUN_MIGRATIONS.length);
    expect(woken.run).toEqual(expect.arrayContaining(["generation", "native_session", "recovery", "recovery_episode"]));
    expect(woken.chunks).toEqual(["upload_id", "idx", "body"]);
    const after = await snapshot(runId);
    expect(after.events).toEqual(before.events);
    expect(after.commands).toEqual(before.commands);
    expect(after.timers).toEqual(before.timers);
    expect(after.run).toMatchObject({ generation: 1, highestSourceSeq: 3, nativeSession: null, checkpoint: null });

    // The stored generation-1 events go on under the same producer: a resend is a duplicate, 4 is next.
    const created = await json(
      await call(`/v1/runs/${runId}/tokens`, { method: "POST", json: { role: "runner" } }),
      201,
    );
    const third = await claim(runId, created.token, "third");
    expect(third.claimed).toMatchObject({ generation: 1, ackedSourceSeq: 3 });
    third.runner.send({
      type: "events",
      epoch: third.epoch,
      events: [agentEvent(3, "approval.requested", { requestId: "req-1" }), agentEvent(4)],
    });
    expect(await third.runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 4 });
    const runnerEvents = (await allEvents(runId)).filter((event) => event.source === "runner");
    expect(runnerEvents.map((event) => [event.sourceSeq, event.generation])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
    ]);
  });

  it("commands delivered before generations existed stay with generation 1 when generation 2 resumes", async () => {
    const live = await runWith([session(1), agentEvent(2)], 2);
    const post = (body: unknown) => call(`/v1/runs/${live.runId}/commands`, { method: "POST", json: body });
    await json(await post({ commandId: "sent-to-1", type: "input", text: "a" }), 201);
    await live.runner.next("command");
    // As migrations 2 and 3 left a run older than them: no command bound, migration 4 not applied.
    await runInDurableObject(runObject(live.runId), (_instance, state) => {
      state.storage.sql.exec("UPDATE commands SET generation = NULL");
      revertBlocksMigration(state.storage.sql, 9);
      revertUsageMigration(state.storage.sql);
      revertClaimAllowance(state.storage.sql);
      revertPoolMigration(state.storage.sql);
      revertMigration5(state.storage.sql);
      state.storage.sql.exec("DELETE FROM schema_migrations WHERE version > 3");
    });
    await evictDurableObject(runObject(live.runId), { webSockets: "close" });
    // Queued after the upgrade and before anyone claims: never delivered, so free for generation 2.
    await lose(live.runId);
    await json(await post({ commandId: "never-sent", type: "input", text: "b" }), 201);
    const bound = () =>
      runInDurableObject(runObject(live.runId), (_instance, state) =>
        state.storage.sql.exec("SELECT command_id, state, generation FROM commands ORDER BY controller_seq").toArray(),
      );
    expect(await bound()).toEqual([
      { command_id: "sent-to-1", state: "delivered", generation: 1 },
      { command_id: "never-sent", state: "queued", generation: null },
    ]);

    const resumed = await connectRunner(live.runId, live.runnerToken);
    resumed.send({ type: "hello", runnerId: "fresh-sandbox", generation: 2 });
    const claimed = await resumed.next("claimed");
    expect(claimed).toMatchObject({ generation: 2 });
    expect((claimed.commands as { commandId: string }[]).map((c) => c.commandId)).toEqual(["never-sent"]);
    expect(await bound()).toEqual([
      { command_id: "sent-to-1", state: "unknown", generation: 1 },
      { command_id: "never-sent", state: "delivered", generation: 2 },
    ]);
  });

  it("a migration that fails is rolled back whole and not recorded", async () => {
    const { run } = await createRun();
    const broken: Migration = {
      version: RUN_MIGRATIONS.length + 1,
      name: "test: half broken",
      sql: "ALTER TABLE commands ADD COLUMN note TEXT; ALTER TABLE no_such_table ADD COLUMN x TEXT;",
    };
    const outcome = await runInDurableObject(runObject(run.id), (_instance, state) => {
      let error: unknown = null;
      try {
        applyMigrations(state.storage, [...RUN_MIGRATIONS, broken]);
      } catch (thrown) {
        error = thrown;
      }
      return {
        failed: error !== null,
        version: schemaVersion(state.storage.sql),
        columns: columnsOf(state.storage.sql, "commands"),
      };
    });
    expect(outcome).toMatchObject({ failed: true, version: RUN_MIGRATIONS.length });
    expect(outcome.columns).not.toContain("note");
  });

  it("a list whose versions are not 1, 2, 3, … is refused before anything is applied", async () => {
    const { run } = await createRun();
    const message = await runInDurableObject(runObject(run.id), (_instance, state) => {
      try {
        applyMigrations(state.storage, [
          ...RUN_MIGRATIONS,
          { ...NEXT_RUN_MIGRATION, version: RUN_MIGRATIONS.length + 2 },
        ]);
        return "applied";
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(message).toMatch(
      new RegExp(`has version ${RUN_MIGRATIONS.length + 2}; expected ${RUN_MIGRATIONS.length + 1}`),
    );
  });

  it("a run indexed before sharding stays in shard 0 after it migrates; a new run keeps the shard count it was born under", async () => {
    const shards = shardLayout(env).shards;
    // A run whose hash shard is not 0, so a wrong sync would land elsewhere.
    let created = await createRun();
    while (shardOf(created.run.id, shards) === 0) created = await createRun();
    const runId = created.run.id;
    const shardOfRun = (shard: number) => env.TENANTS.get(env.TENANTS.idFromName(shardName("tenant-a", shard)));
    const rowsIn = (shard: number) =>
      runInDurableObject(shardOfRun(shard), (_instance, state) =>
        state.storage.sql.exec<{ status: string }>("SELECT status FROM runs WHERE run_id = ?", runId).toArray(),
      );
    expect(
      await runInDurableObject(runObject(runId), (_i, state) =>
        state.storage.sql.exec("SELECT index_shards FROM run").one(),
      ),
    ).toEqual({ index_shards: shards });
    expect(await rowsIn(shardOf(runId, shards))).toEqual([{ status: "queued" }]);

    // As before sharding: no shard count in the run's row, its entry in the tenant's one index (shard 0).
    const entry = await runInDurableObject(shardOfRun(shardOf(runId, shards)), (_instance, state) => {
      const row = state.storage.sql.exec("SELECT * FROM runs WHERE run_id = ?", runId).one();
      state.storage.sql.exec("DELETE FROM runs WHERE run_id = ?", runId);
      return row;
    });
    await runInDurableObject(shardOfRun(0), (_instance, state) => {
      const names = Object.keys(entry);
      state.storage.sql.exec(
        `INSERT INTO runs (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        ...names.map((name) => entry[name] ?? null),
      );
    });
    await runInDurableObject(runObject(runId), (_instance, state) => {
      state.storage.sql.exec("ALTER TABLE run DROP COLUMN index_shards");
      state.storage.sql.exec("DELETE FROM schema_migrations WHERE version >= 10");
    });
    await evictDurableObject(runObject(runId));
    await json(await call(`/v1/runs/${runId}/cancel`, { method: "POST", json: {} }), 202);

    expect(await rowsIn(0)).toEqual([{ status: "cancelled" }]);
    expect(await rowsIn(shardOf(runId, shards))).toEqual([]);
    const listed = await json<{ runs: { runId: string }[] }>(await call("/v1/runs?limit=200"), 200);
    expect(listed.runs.filter((run) => run.runId === runId)).toHaveLength(1);
  });

  it("the tenant index and stream objects record their schema versions too", async () => {
    const { run } = await createRun({}, KEY_B);
    await json(await call("/v1/runs?limit=1", { key: KEY_B }), 200);
    // The index shard the run's id and today's shard count place it in (tenant-index-shards.ts).
    const shard = shardOf(run.id, shardLayout(env).shards);
    const index = env.TENANTS.get(env.TENANTS.idFromName(shardName("tenant-b", shard)));
    const indexed = await runInDurableObject(index, (_instance, state) => ({
      version: schemaVersion(state.storage.sql),
      listed: state.storage.sql.exec("SELECT run_id FROM runs WHERE run_id = ?", run.id).toArray().length,
    }));
    expect(indexed).toEqual({ version: TENANT_INDEX_MIGRATIONS.length, listed: 1 });

    const path = `migrations-${crypto.randomUUID()}`;
    const put = await call(`/v1/stream/${path}`, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(put.status).toBe(201);
    const stream = env.STREAMS.get(env.STREAMS.idFromName(JSON.stringify(["tenant-a", path])));
    expect(await runInDurableObject(stream, (_instance, state) => schemaVersion(state.storage.sql))).toBe(
      STREAM_MIGRATIONS.length,
    );
  });
});
