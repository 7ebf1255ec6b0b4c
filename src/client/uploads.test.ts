import { randomUUID } from "node:crypto";
import { mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { processUploadDirectory } from "../worker/uploadDirectory.ts";
import { UploadError } from "./errors.ts";
import { beforeRequest, clusterScratch, extraWorker, testCluster } from "./testCluster.ts";
import { MAX_UPLOAD_BYTES, readUpload } from "./uploads.ts";

const REGISTRY = new URL("../worker/taskRegistry.ts", import.meta.url).href;
/** The client's entry point in the sources, which `import "weft"` is in a checkout. */
const CLIENT_SOURCES = new URL("./index.ts", import.meta.url).href;

const scratch = clusterScratch("upload-test");
const extra = scratch.workers;
// The workers' uploads, in this process: a test process may end without its exit handlers.
afterAll(() => processUploadDirectory().close());

/** A file `name` in the test's directory (not where workers look), with `text`. */
function file(name: string, text: string): string {
  const path = join(scratch.dir, name);
  writeFileSync(path, text);
  return path;
}

/**
 * An uploadable task module defining a task of its own name, which uses a
 * package by bare name (`yaml`: not reachable from a temporary directory), a
 * sibling module and a sibling data file, both uploaded.
 */
function moduleSet(): { helper: string; table: string; main: string; task: string } {
  const id = randomUUID();
  const task = `uploaded-${id}`;
  const helper = file(`helper-${id}.mjs`, "export const twice = (x) => 2 * x;\n");
  const table = file(`table-${id}.json`, '{"offset": 100}\n');
  const main = file(
    `main-${id}.ts`,
    `import { readFileSync } from "node:fs";\n` +
      `import YAML from "yaml";\n` +
      `import { defineTask } from ${JSON.stringify(REGISTRY)};\n` +
      `import { twice } from "./helper-${id}.mjs";\n` +
      `const { offset } = JSON.parse(readFileSync(new URL("./table-${id}.json", import.meta.url), "utf8"));\n` +
      `defineTask(${JSON.stringify(task)}, (x: number): string => YAML.stringify({ v: twice(x) + offset }).trim());\n`,
  );
  return { helper, table, main, task };
}

describe("Client.uploadFile", () => {
  for (const executor of ["inline", "threads"] as const) {
    it(`workers there, joining later and restarted run the uploaded module's tasks (${executor})`, async () => {
      const { cluster, client } = await testCluster({ executor, threadsPerWorker: 2 });
      const { helper, table, main, task } = moduleSet();
      const addresses = cluster.workers.map((w) => w.address).sort();
      expect(Object.keys(await client.uploadFile(helper, { load: false }))).toEqual(addresses);
      expect(Object.keys(await client.uploadFile(pathToFileURL(table)))).toEqual(addresses);
      const loaded = await client.uploadFile(main);
      expect(Object.keys(loaded)).toEqual(addresses);
      for (const names of Object.values(loaded)) expect(names).toContain(task);
      // Every thread of every worker: more tasks than threads, at once.
      const results = await client.gather(
        Array.from({ length: 8 }, (_, i) => client.submitWith({ pure: false }, task, i)),
      );
      expect(results).toEqual(Array.from({ length: 8 }, (_, i) => `v: ${2 * i + 100}`));
      // A worker joining later saves and imports them as it registers.
      // One thread: the number is not what is checked of it, and each costs a start.
      const late = await extraWorker(cluster, {
        executor: executor === "threads" ? "piscina" : "inline",
        nthreads: 1,
        acceptUploads: true,
      });
      extra.push(late);
      expect(late.taskNames).toContain(task);
      expect(await client.submitWith({ workers: [late.address] }, task, 7)).toBe("v: 114");
      // The same file again changes nothing.
      expect(Object.keys(await client.uploadFile(main))).toHaveLength(3);
      await late.close();
      extra.length = 0;
      // The workers a restart starts get them too.
      await client.restart();
      expect(await client.submitWith({ pure: false }, task, 1)).toBe("v: 102");
    });
  }

  it("an uploaded module's import of weft gets the weft the worker runs, here its sources", async () => {
    // A pool thread runs weft from its sources, as `npm start` does: a `weft` resolved
    // to dist/ (stale, or missing in a checkout) would be another copy, with task
    // modules' registrations, classes and codec of its own. The module compares its
    // `weft` with the sources the thread runs: currentTaskKey() alone cannot tell,
    // as the task context is shared by every copy (taskContext.ts).
    const { client } = await testCluster({ workers: 1, executor: "threads" });
    const name = `weftImport-${randomUUID()}`;
    const path = file(
      `${name}.mjs`,
      `import * as weft from "weft";
` +
        `weft.defineTask(${JSON.stringify(name)}, async () => [weft.currentTaskKey(), ` +
        `weft.defineTask === (await import(${JSON.stringify(CLIENT_SOURCES)})).defineTask]);
`,
    );
    await client.uploadFile(path);
    const f = client.submit(name);
    expect(await f).toEqual([f.key, true]);
  });

  it("over TCP, a file large enough to travel out of band reaches workers joining later", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    const name = `large-${randomUUID()}`;
    // Above the wire's out-of-band threshold (64 KiB): the scheduler's comm leaves it unread.
    const padding = `// ${"x".repeat(200_000)}\n`;
    const path = file(
      `${name}.mjs`,
      `${padding}import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(name)}, () => 7);\n`,
    );
    await client.uploadFile(path);
    // Again: the scheduler compares it with the copy it keeps.
    await client.uploadFile(path);
    const late = await extraWorker(cluster, { listen: "tcp://127.0.0.1:0", acceptUploads: true });
    extra.push(late);
    expect(late.taskNames).toContain(name);
    expect(await client.submitWith({ workers: [late.address] }, name)).toBe(7);
  });

  it("refuses files it cannot upload, before any worker is asked", async () => {
    const { client } = await testCluster({ workers: 1 });
    const data = file("data.json", "{}");
    await expect(client.uploadFile(data, { load: true })).rejects.toThrow(
      /^uploadFile: data\.json cannot be imported: only \.js, .* are modules/,
    );
    await expect(client.uploadFile(join(scratch.dir, "nope.mjs"))).rejects.toThrow(
      /^uploadFile: cannot read .*nope\.mjs: ENOENT/,
    );
    mkdirSync(join(scratch.dir, "sub"));
    await expect(client.uploadFile(join(scratch.dir, "sub"))).rejects.toThrow(/sub is not a file/);
    await expect(client.uploadFile(file("package.json", "{}"))).rejects.toThrow(
      /package\.json cannot be uploaded/,
    );
    await expect(client.uploadFile(new URL("https://example.com/x.mjs"))).rejects.toThrow(
      "uploadFile: not a file URL: https://example.com/x.mjs",
    );
    await expect(client.uploadFile("")).rejects.toThrow(/expected a path or file URL/);
    await expect(client.uploadFile(data, { load: "yes" as never })).rejects.toThrow(
      'uploadFile: load must be true or false, got "yes"',
    );
    // One byte past the limit (a sparse file: refused before it is read).
    const big = file("big.bin", "");
    truncateSync(big, MAX_UPLOAD_BYTES + 1);
    await expect(client.uploadFile(big)).rejects.toThrow(
      `uploadFile: ${big} is ${MAX_UPLOAD_BYTES + 1} bytes; at most ${MAX_UPLOAD_BYTES} (64 MiB) can be uploaded`,
    );
    expect((await client.workers())[0].address).toBeTruthy();
  });

  it("readUpload takes a file URL given as a string, and refuses options that are not an object", async () => {
    const data = file("given-as-url.json", "{}");
    const got = await readUpload(pathToFileURL(data).href);
    expect(got.name).toBe("given-as-url.json");
    expect(got.load).toBe(false);
    expect(Buffer.from(got.data).toString()).toBe("{}");
    await expect(readUpload(data, null as never)).rejects.toThrow(
      /^uploadFile: options must be an object, got null/,
    );
  });

  it("a module uploaded with load: false is imported when uploaded again with load: true, here and by workers to come", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const task = `later-${randomUUID()}`;
    const mod = file(
      `${task}.mjs`,
      `import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(task)}, (x) => x * 3);\n`,
    );
    const [w] = cluster.workers;
    expect(Object.values(await client.uploadFile(mod, { load: false }))[0]).not.toContain(task);
    expect(w?.taskNames).not.toContain(task);
    expect(Object.values(await client.uploadFile(mod, { load: true }))[0]).toContain(task);
    expect(await client.submit(task, 5)).toBe(15);
    const late = await extraWorker(cluster, { acceptUploads: true });
    extra.push(late);
    expect(late.taskNames).toContain(task);
  });

  it("another file under a name uploaded already is refused, and the first stays", async () => {
    const { cluster, client } = await testCluster();
    const name = `same-${randomUUID()}`;
    const first = file(
      `${name}.mjs`,
      `import { defineTask } from ${JSON.stringify(REGISTRY)};\ndefineTask(${JSON.stringify(name)}, () => 1);\n`,
    );
    await client.uploadFile(first);
    const other = join(scratch.dir, "other");
    mkdirSync(other);
    writeFileSync(join(other, `${name}.mjs`), "export const x = 2;\n");
    const err = await client.uploadFile(join(other, `${name}.mjs`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect(err).toMatchObject({
      worker: cluster.workers.map((w) => w.address).sort()[0],
      file: `${name}.mjs`,
    });
    expect((err as Error).message).toMatch(
      /^uploading .*\.mjs to .* failed: .*Error: a different file named .* was uploaded already/,
    );
    expect(await client.submitWith({ pure: false }, name)).toBe(1);
  });

  it("a worker that does not accept uploads refuses them, and cannot join a cluster that has some", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const refusing = await extraWorker(cluster);
    extra.push(refusing);
    const { helper } = moduleSet();
    const err = await client.uploadFile(helper).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as Error).message).toContain(
      "this worker does not accept uploaded files: start it with --allow-uploads",
    );
    // Refused by one: not kept for the workers to come.
    const later = await extraWorker(cluster);
    extra.push(later);
    expect(later.status).toBe("running");
    await refusing.close();
    await later.close();
    extra.length = 0;
    await client.uploadFile(helper);
    await expect(extraWorker(cluster)).rejects.toThrow(
      /the cluster has uploaded files \(helper-.*\.mjs\), which this worker does not accept: start it with --allow-uploads/,
    );
  });

  it("a LocalCluster's workers accept uploads unless worker.acceptUploads is false", async () => {
    const { cluster, client } = await testCluster({ workers: 1, worker: { acceptUploads: false } });
    expect(cluster.workers[0].options.acceptUploads).toBe(false);
    const err = await client.uploadFile(moduleSet().helper).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as Error).message).toContain("this worker does not accept uploaded files");
    const { cluster: accepting } = await testCluster({ workers: 1 });
    expect(accepting.workers[0].options.acceptUploads).toBe(true);
  });

  it("a module that fails to import rejects, naming the worker, and is not kept", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const broken = file(`broken-${randomUUID()}.mjs`, 'throw new Error("broken at import");\n');
    const err = await client.uploadFile(broken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as Error).message).toMatch(/^uploading broken-.* failed: .*broken at import/);
    const late = await extraWorker(cluster, { acceptUploads: true });
    extra.push(late);
    expect(late.status).toBe("running");
  });

  for (const executor of ["inline", "threads"] as const) {
    it(`a module that throws as it loads leaves no task function, and a fixed one under its name replaces it (${executor})`, async () => {
      // Two threads, each importing it; one worker of them: a second checks nothing more
      // (the inline workers keep two, sharing the process's module cache, and cost no thread).
      const workers = executor === "threads" ? 1 : 2;
      const { cluster, client } = await testCluster({ executor, workers, threadsPerWorker: 2 });
      const id = randomUUID();
      const [a, b] = [`a-${id}`, `b-${id}`];
      const dir = join(scratch.dir, id);
      mkdirSync(dir);
      const path = join(dir, `fixme-${id}.mjs`);
      const define = `import { defineTask } from ${JSON.stringify(REGISTRY)};\n`;
      writeFileSync(
        path,
        `${define}defineTask(${JSON.stringify(a)}, () => "broken");\nnull.x;\ndefineTask(${JSON.stringify(b)}, () => "b");\n`,
      );
      await expect(client.uploadFile(path)).rejects.toThrow(/cannot import the task module/);
      // The function it defined before it threw is not run.
      await expect(client.submitWith({ pure: false }, a)).rejects.toThrow(
        /unknown task function "a-/,
      );
      writeFileSync(
        path,
        `${define}defineTask(${JSON.stringify(a)}, () => "fixed");\ndefineTask(${JSON.stringify(b)}, () => "b");\n`,
      );
      for (const names of Object.values(await client.uploadFile(path)))
        expect(names).toEqual(expect.arrayContaining([a, b]));
      const runs = await client.gather(
        Array.from({ length: 6 }, () => client.submitWith({ pure: false }, a)),
      );
      expect(runs).toEqual(Array(6).fill("fixed"));
      // Kept by the scheduler, the fixed one: a worker joining later has it.
      const late = await extraWorker(cluster, { acceptUploads: true });
      extra.push(late);
      expect(await client.submitWith({ workers: [late.address] }, b)).toBe("b");
      await late.close();
      extra.length = 0;
    });
  }

  for (const executor of ["inline", "threads"] as const) {
    it(`a module uploaded before one it imports is imported once that one is; one level deeper, the error says the file is there now (${executor})`, async () => {
      // As above: one worker of two threads.
      const workers = executor === "threads" ? 1 : 2;
      const { client } = await testCluster({ executor, workers, threadsPerWorker: 2 });
      const id = randomUUID();
      const task = `late-import-${id}`;
      const main = file(
        `main-${id}.mjs`,
        `import { defineTask } from ${JSON.stringify(REGISTRY)};\n` +
          `import { twice } from "./helper-${id}.mjs";\n` +
          `defineTask(${JSON.stringify(task)}, (x) => twice(x));\n`,
      );
      const helper = file(`helper-${id}.mjs`, "export const twice = (x) => 2 * x;\n");
      await expect(client.uploadFile(main)).rejects.toThrow(/Cannot find module .*helper-.*\.mjs/);
      await client.uploadFile(helper, { load: false });
      // Node.js keeps the first failure for main's URL: asked again, under another.
      for (const names of Object.values(await client.uploadFile(main)))
        expect(names).toContain(task);
      expect(await client.submitWith({ pure: false }, task, 4)).toBe(8);

      // main2 -> mid -> leaf: mid's failure is kept too, which no new URL of main2 undoes.
      const leaf = file(`leaf-${id}.mjs`, "export const one = 1;\n");
      const mid = file(`mid-${id}.mjs`, `export { one } from "./leaf-${id}.mjs";\n`);
      const main2 = file(
        `main2-${id}.mjs`,
        `import { one } from "./mid-${id}.mjs";\nexport const x = one;\n`,
      );
      await client.uploadFile(mid, { load: false });
      await expect(client.uploadFile(main2)).rejects.toThrow(/Cannot find module .*leaf-/);
      await client.uploadFile(leaf, { load: false });
      const err = await client.uploadFile(main2).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UploadError);
      expect((err as Error).message).toMatch(
        /Cannot find module .*leaf-.* imported from .*mid-.*: it is there now, but was not when that module was first imported, and Node\.js keeps that failure/,
      );
    });
  }

  it("a worker that joins as the scheduler records a file is asked first: one refusing it keeps the file from being recorded", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const { helper } = moduleSet();
    // The worker registers after the others were asked, before the scheduler takes the record.
    beforeRequest(client, "upload-file", async () => {
      extra.push(await extraWorker(cluster));
    });
    const err = await client.uploadFile(helper).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as UploadError).worker).toBe(extra[0].address);
    expect((err as Error).message).toContain("this worker does not accept uploaded files");
    // Nothing kept: a worker that does not accept uploads still joins.
    expect(cluster.scheduler.uploads).toEqual([]);
    const later = await extraWorker(cluster);
    extra.push(later);
    expect(later.status).toBe("running");
    for (const w of extra.splice(0)) await w.close();
  });

  it("a worker that joins as the scheduler records a file and takes it is asked, and the file recorded", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const { helper } = moduleSet();
    beforeRequest(client, "upload-file", async () => {
      extra.push(await extraWorker(cluster, { acceptUploads: true }));
    });
    const answers = await client.uploadFile(helper);
    const addresses = [cluster.workers[0].address, extra[0].address].sort();
    expect(Object.keys(answers)).toEqual(addresses);
    expect(cluster.scheduler.uploads.map((f) => f.name)).toEqual([basename(helper)]);
    for (const w of extra.splice(0)) await w.close();
  });
});
