import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AWARENESS_FIELD,
  actingPage,
  actsHere,
  alone,
  announceKernelClient,
} from "../labextension/shared.js";

/** The awareness of one page (`clientID`) among the pages of a shared document. */
function awareness(clientID, pages) {
  const states = new Map(pages.map(([id, client]) => [id, pageState(client)]));
  const listeners = [];
  return {
    clientID,
    published: 0,
    getStates: () => states,
    setLocalStateField(field, value) {
      states.set(clientID, { ...(states.get(clientID) ?? {}), [field]: value });
      this.published++;
    },
    on: (event, fn) => event === "change" && listeners.push(fn),
    join(id, client) {
      states.set(id, pageState(client));
      for (const fn of listeners) fn({ added: [id], updated: [], removed: [] });
    },
  };
}

function pageState(client) {
  return client ? { user: { name: "x" }, [AWARENESS_FIELD]: { kernel_client: client } } : {};
}

test("the page that the kernel answers acts, when it is still here", () => {
  const pages = [
    [7, "kernel-a"],
    [3, "kernel-b"],
  ];
  assert.equal(actingPage(new Map(pages.map(([i, c]) => [i, pageState(c)])), "kernel-a"), 7);
  assert.equal(actsHere(awareness(7, pages), "kernel-a"), true);
  assert.equal(actsHere(awareness(3, pages), "kernel-a"), false);
});

test("else one page acts, the same in every page: the lowest client id", () => {
  const pages = [
    [7, "kernel-a"],
    [3, "kernel-b"],
    [1, null], // a page without the extension's kernel connection (or not yet named)
  ];
  for (const session of ["kernel-gone", null, undefined, ""]) {
    assert.equal(actsHere(awareness(3, pages), session), true);
    assert.equal(actsHere(awareness(7, pages), session), false);
    assert.equal(actsHere(awareness(1, pages), session), false);
  }
});

test("without a shared document, or before any page is named, every page acts", () => {
  assert.equal(actsHere(null, "kernel-a"), true);
  assert.equal(actsHere(awareness(5, [[5, null]]), "kernel-a"), true);
});

test("a page names its kernel connection in the awareness", () => {
  const mine = awareness(4, [[9, "kernel-z"]]);
  announceKernelClient(mine, "kernel-y");
  assert.deepEqual(mine.getStates().get(4), { [AWARENESS_FIELD]: { kernel_client: "kernel-y" } });
  assert.equal(actsHere(mine, "kernel-y"), true);
  assert.equal(actsHere(mine, "kernel-z"), false);
  announceKernelClient(null, "kernel-y"); // no shared document: nothing to say
  announceKernelClient(mine, undefined); // no kernel yet
  assert.equal(mine.getStates().get(4)[AWARENESS_FIELD].kernel_client, "kernel-y");
});

test("a page is alone on a document that no other page has open", () => {
  assert.equal(alone(null), true);
  assert.equal(alone(awareness(2, [[2, "kernel-a"]])), true);
  assert.equal(
    alone(
      awareness(2, [
        [2, "kernel-a"],
        [8, null],
      ]),
    ),
    true,
  ); // the server's
  assert.equal(
    alone(
      awareness(2, [
        [2, "kernel-a"],
        [8, "kernel-b"],
      ]),
    ),
    false,
  );
  const other = awareness(2, [[2, "kernel-a"]]);
  other.getStates().set(9, { user: { name: "B" } }); // a page without the extension
  assert.equal(alone(other), false);
});

test("a page says again which kernel connection it is when another page joins", () => {
  const mine = awareness(4, []);
  announceKernelClient(mine, "kernel-y");
  announceKernelClient(mine, "kernel-y"); // again (a new kernel connection): one listener
  assert.equal(mine.published, 2);
  mine.join(9, null);
  assert.equal(mine.published, 3); // the newcomer hears of this page at once
  assert.equal(mine.getStates().get(4)[AWARENESS_FIELD].kernel_client, "kernel-y");
});

test("a made-up anonymous name is saved only while another person is on the notebook", async () => {
  const { clickerIdentity, othersOn } = await import("../labextension/shared.js");
  const anonymous = { username: "0f".repeat(16), name: "Anonymous Lysithea", display_name: "x" };
  assert.equal(
    clickerIdentity(anonymous, () => false),
    null,
  ); // alone: the page says "you"
  assert.equal(
    clickerIdentity(anonymous, () => true),
    anonymous,
  ); // tells the people apart
  const ada = { username: "ada", name: "Ada Lovelace" };
  assert.equal(
    clickerIdentity(ada, () => false),
    ada,
  ); // a name the server knows: always
  assert.equal(
    clickerIdentity({ username: "x", name: "Anonymous Coward" }, () => false)?.name,
    "Anonymous Coward",
  ); // a real username: not made up
  assert.equal(
    clickerIdentity(null, () => true),
    null,
  );

  const states = new Map([
    [1, { user: { username: "me" } }],
    [2, { user: { username: "me" } }], // my other page
  ]);
  const awareness = { clientID: 1, getStates: () => states, setLocalStateField() {} };
  assert.equal(othersOn(awareness, "me"), false);
  states.set(3, { user: { username: "grace" } });
  assert.equal(othersOn(awareness, "me"), true);
  assert.equal(othersOn(null, "me"), false);
});
