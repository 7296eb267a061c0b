// `reliora mcp` driven by the official TypeScript MCP client SDK (@modelcontextprotocol/sdk,
// pinned in package.json) over stdio.
//
//     node tests/mcp_ts/client.mjs REPO_ROOT BINARY
//
// Builds an index of REPO_ROOT/data with the CLI, starts `BINARY --index DIR mcp` through the
// SDK's StdioClientTransport, lists the tools, calls search, record, feedback and show, then makes
// one call per class of tool error. The SDK validates every structuredContent it receives against
// the tool's output schema, errors included, so a tool error must come back as text content only:
// isError true, one text block holding {"error": CODE, "message": ...}. Prints one line per check
// and `N passed, N failed`; exits 1 on any failure.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const [root, binaryArg] = process.argv.slice(2);
if (!root || !binaryArg) {
  console.error("usage: node client.mjs REPO_ROOT BINARY");
  process.exit(2);
}
const binary = path.resolve(binaryArg);
const NOW = "2026-01-01T00:00:00Z";

let passed = 0;
let failed = 0;
function check(name, condition, detail = "") {
  if (condition) {
    passed += 1;
    console.log(`ok: ${name}`);
  } else {
    failed += 1;
    console.log(`FAILED: ${name} ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
}

/** Runs the CLI with JSON output; returns its exit status and parsed stdout. */
function cli(index, ...args) {
  try {
    const out = execFileSync(binary, ["--format", "json", "--index", index, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: 0, json: JSON.parse(out) };
  } catch (error) {
    return { status: error.status, json: JSON.parse(error.stdout) };
  }
}

/** Calls a tool; a thrown error (a protocol error, or the SDK rejecting the result) is returned. */
async function call(client, name, args) {
  try {
    return { result: await client.callTool({ name, arguments: args }) };
  } catch (error) {
    return { thrown: `${error?.code ?? ""} ${error?.message ?? error}` };
  }
}

/** The structured content of a successful call, after checking its text content matches. */
async function ok(client, name, args) {
  const { result, thrown } = await call(client, name, args);
  const label = `${name} ${JSON.stringify(args)}`;
  if (thrown) {
    check(`${label} succeeds`, false, thrown);
    return undefined;
  }
  check(`${label} succeeds`, result.isError !== true && result.structuredContent, result.content);
  let text;
  try {
    text = JSON.parse(result.content?.[0]?.text);
  } catch {
    text = undefined;
  }
  check(
    `${label} text content is the structured content`,
    JSON.stringify(text) === JSON.stringify(result.structuredContent),
  );
  return result.structuredContent;
}

/** Checks that a call is a readable tool error with `code`. */
async function toolError(client, name, args, code) {
  const { result, thrown } = await call(client, name, args);
  const label = `${name} ${JSON.stringify(args)} is a tool error ${code}`;
  if (thrown) {
    check(label, false, `the client threw: ${thrown}`);
    return;
  }
  let error;
  try {
    error = JSON.parse(result.content?.[0]?.text);
  } catch {
    error = undefined;
  }
  check(
    label,
    result.isError === true &&
      result.structuredContent === undefined &&
      result.content.length === 1 &&
      result.content[0].type === "text" &&
      error?.error === code &&
      typeof error?.message === "string" &&
      error.message.length > 0,
    result,
  );
}

async function main() {
  const tmp = mkdtempSync(path.join(tmpdir(), "reliora-mcp-ts-"));
  const index = path.join(tmp, "index");
  const transport = new StdioClientTransport({
    command: binary,
    args: ["--index", index, "mcp"],
    stderr: "pipe",
  });
  const client = new Client({ name: "reliora-ts-test", version: "1.0.0" });
  try {
    const built = cli(index, "build", "--input", path.join(root, "data"));
    check("built the sample index", built.status === 0 && built.json.records === 315, built.json);

    await client.connect(transport);
    check("connected", true);
    const server = client.getServerVersion();
    console.log(
      `client requests protocol ${LATEST_PROTOCOL_VERSION}; server ${server?.name} ${server?.version}`,
    );

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    check(
      "four tools",
      JSON.stringify(Object.keys(byName).sort()) ===
        JSON.stringify(["feedback", "record", "search", "show"]),
      Object.keys(byName),
    );
    check(
      "every tool declares an output schema",
      tools.every((tool) => tool.outputSchema?.type === "object"),
    );
    check(
      "record is destructive, search and show read-only",
      byName.record?.annotations?.destructiveHint === true &&
        byName.search?.annotations?.readOnlyHint === true &&
        byName.show?.annotations?.readOnlyHint === true,
      tools.map((tool) => tool.annotations),
    );

    // Successful calls: the SDK validates each structured result against its output schema.
    const found = await ok(client, "search", {
      query: "connection pool timed out under load",
      limit: 3,
      now: NOW,
    });
    check("search finds three results", found?.results?.length === 3, found);
    const experience = {
      id: "ts-1",
      title: "vite dev server: HMR websocket fails behind the reverse proxy",
      problems: ["[vite] failed to connect to websocket"],
      solution: "Set server.hmr.clientPort to the proxy's port.",
      tags: ["vite", "javascript"],
      verification: "edited a component: the page updated without a reload",
    };
    const recorded = await ok(client, "record", { record: experience });
    check("record reports the id", recorded?.id === "ts-1" && recorded?.replaced === false, recorded);
    const counted = await ok(client, "feedback", { id: "ts-1", outcome: "success" });
    check("feedback counts", counted?.feedback?.success === 1, counted);
    const shown = await ok(client, "show", { id: "ts-1" });
    check("show returns the record", shown?.title === experience.title, shown);
    // An untitled record (SPEC §1): its result's "title": null passes the output schema.
    await ok(client, "record", { record: { id: "ts-untitled", problems: ["esbuild service stopped"] } });
    const untitled = await ok(client, "search", { query: "esbuild service stopped", limit: 3, now: NOW });
    const hit = untitled?.results?.find((r) => r.id === "ts-untitled");
    check("an untitled result has a null title", hit !== undefined && hit.title === null, untitled);

    // Tool errors: readable by the SDK, with the SPEC code the CLI gives.
    const outcome = cli(index, "feedback", "ts-1", "--outcome", "great");
    check("the CLI refuses outcome great", outcome.status === 2, outcome.json);
    const cases = [
      ["search", { query: "q", limit: 0 }, "invalid_limit"],
      ["search", { query: "" }, "empty_query"],
      ["show", { id: "no-such-record" }, "not_found"],
      ["record", { record: {} }, "invalid_record"],
      ["record", { record: { title: " ", verification: "no searchable text" } }, "invalid_record"],
      ["feedback", { id: "ts-1", outcome: "great" }, outcome.json.error],
      ["search", { query: "q", config: "/etc/passwd" }, "invalid_option"],
    ];
    for (const [name, args, code] of cases) {
      await toolError(client, name, args, code);
    }
    // The server carries on after errors.
    const after = await ok(client, "search", { query: "docker", limit: 1 });
    check("search after the errors", after?.results?.length === 1, after);
  } catch (error) {
    check("the run reached its end", false, `${error?.stack ?? error}`);
  } finally {
    await client.close().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`mcp_ts: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main();
