// Unit tests of the tables' pure formatting: node --test web/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { age, vmiIPs, vmiPhase, vmiReady, vmStatus, runStrategy, volumeSource, diskBus } from "../src/format.js";

test("age is kubectl's", () => {
  const now = Date.parse("2026-12-06T12:00:00Z");
  assert.equal(age("2026-12-06T11:59:18Z", now), "42s");
  assert.equal(age("2026-12-06T11:55:00Z", now), "5m");
  assert.equal(age("2026-12-06T09:00:00Z", now), "3h");
  assert.equal(age("2026-12-03T12:00:00Z", now), "3d");
  assert.equal(age("", now), "");
});

test("VMI columns", () => {
  const vmi = {
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True" }, { type: "Paused", status: "True" }],
      interfaces: [{ ipAddress: "10.0.0.5" }, { ipAddress: "10.0.0.5" }, { ipAddress: "fd00::5" }],
    },
  };
  assert.equal(vmiReady(vmi), "True");
  assert.equal(vmiIPs(vmi), "10.0.0.5, fd00::5");
  assert.equal(vmiPhase(vmi), "Running (paused)");
  assert.equal(vmiPhase({}), "Pending");
});

test("VM columns", () => {
  assert.equal(vmStatus({ status: { printableStatus: "Running" } }), "Running");
  assert.equal(vmStatus({}), "Stopped");
  assert.equal(runStrategy({ spec: { running: true } }), "Always");
  assert.equal(runStrategy({ spec: { runStrategy: "Halted" } }), "Halted");
});

test("volumes and disks", () => {
  assert.equal(volumeSource({ name: "root", dataVolume: { name: "fedora" } }), "dataVolume fedora");
  assert.equal(volumeSource({ name: "c", containerDisk: { image: "reg/x:1" } }), "containerDisk reg/x:1");
  assert.equal(volumeSource({ name: "ci", cloudInitNoCloud: { userData: "#!" } }), "cloudInitNoCloud");
  assert.equal(diskBus({ name: "a", cdrom: { bus: "sata" } }), "cdrom sata");
  assert.equal(diskBus({ name: "a" }), "disk");
});
