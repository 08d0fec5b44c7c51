// Unit tests of when the console and display connect again: node --test web/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { StreamRetry, takenOver } from "../src/stream.js";

function retryWith(statusLines) {
  let connects = 0;
  const status = { say: (text, kind) => statusLines.push([kind, text]) };
  const retry = new StreamRetry(() => { connects++; }, status);
  return { retry, connects: () => connects };
}

const refusal = (status, message) => ({ status, describe: () => `Refused (${status}): ${message}` });

test("a VMI that is gone or not running is waited for; forbidden is not", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  for (const [code, retries] of [[404, true], [409, true], [503, true], [403, false], [401, false]]) {
    const lines = [];
    const { retry, connects } = retryWith(lines);
    retry.failed(refusal(code, "no"), "The console could not be opened");
    t.mock.timers.tick(1000);
    assert.equal(connects(), retries ? 1 : 0, `${code}: ${JSON.stringify(lines)}`);
    assert.equal(lines.at(-1)[0], retries ? "warn" : "error", `${code}`);
    assert.match(lines.at(-1)[1], new RegExp(`Refused \\(${code}\\): no`));
  }
});

test("backoff doubles up to 15 s and a reset starts again at 1 s", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const lines = [];
  const { retry, connects } = retryWith(lines);
  const waits = [];
  for (let i = 0; i < 6; i++) {
    retry.dropped({ code: 1006, reason: "" }, "The display");
    waits.push(Number(/in (\d+) s/.exec(lines.at(-1)[1])[1]));
  }
  assert.deepEqual(waits, [1, 2, 4, 8, 15, 15]);
  retry.reset();
  retry.dropped({ code: 1006, reason: "" }, "The display");
  t.mock.timers.tick(1000);
  assert.equal(connects(), 1);
});

test("a session another client took over waits for the user", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const lines = [];
  const { retry, connects } = retryWith(lines);
  retry.dropped({ code: 4000, reason: "console session taken over by another client" }, "The console");
  t.mock.timers.tick(60000);
  assert.equal(connects(), 0);
  assert.match(lines.at(-1)[1], /Press Reconnect/);
  assert.ok(takenOver("VNC session replaced"));
});
