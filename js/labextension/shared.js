/**
 * One page acts for the kernel in a shared notebook (real-time collaboration).
 *
 * With jupyter-collaboration every page on a notebook edits one shared document, and every page
 * connected to the kernel receives what the kernel sends on the `jupyter_turns.metadata` comm.
 * Without collaboration each page applies it to its own copy; with it, two pages applying the
 * same insert, output replacement or text change would make it twice in the one document (two
 * cells, two records). So in a shared document one page acts: the page whose message the
 * kernel's is an answer to (its `parent_header.session`: the page that ran the cell, asked for
 * an undo or announced itself), if it is still here, else the page with the lowest document
 * client id. Each page names its kernel connection in the document's awareness (the presence
 * JupyterLab shares between the pages of a document), so every page makes the same choice.
 * The other pages stay silent: the kernel takes the first answer. No Jupyter imports: runs
 * (and is tested) anywhere.
 *
 * @typedef {{clientID: number, getStates(): Map<number, any>,
 *            setLocalStateField(field: string, value: unknown): void,
 *            on?(event: string, fn: (change: {added: number[]}) => void): void}} AwarenessLike
 */

/** The awareness field where a page names its kernel connection (`kernel.clientId`). */
export const AWARENESS_FIELD = "jupyter_turns";

/** The awareness objects this page answers new pages on (see announceKernelClient). */
const greeting = new WeakSet();

/**
 * Say in the shared document which kernel connection this page is. A page that joins later
 * is not sent the states published before it came (the server relays updates only), so this
 * page says it again whenever a page joins: the newcomer knows of it at once, not at the
 * awareness' next renewal (15 s), and makes the same choice as the others.
 * @param {AwarenessLike | null | undefined} awareness
 * @param {string | null | undefined} kernelClient
 */
export function announceKernelClient(awareness, kernelClient) {
  if (!awareness || typeof kernelClient !== "string") return;
  awareness.setLocalStateField(AWARENESS_FIELD, { kernel_client: kernelClient });
  if (greeting.has(awareness) || typeof awareness.on !== "function") return;
  greeting.add(awareness);
  awareness.on("change", (/** @type {{added: number[]}} */ change) => {
    if (change.added.some((id) => id !== awareness.clientID)) {
      const mine = awareness.getStates().get(awareness.clientID)?.[AWARENESS_FIELD];
      if (mine) awareness.setLocalStateField(AWARENESS_FIELD, { ...mine });
    }
  });
  // a page that goes (reloaded, closed) says so: the server does not, and the others would
  // otherwise keep choosing it for 30 s (the awareness' time-out)
  globalThis.addEventListener?.("pagehide", () =>
    awareness.setLocalStateField(AWARENESS_FIELD, null),
  );
}

/**
 * The document client id of the page that acts on a kernel message answering `session`: the
 * page of that kernel connection, else the lowest client id among the pages that named one;
 * null when no page did.
 * @param {Map<number, any>} states the awareness states, by document client id
 * @param {unknown} session the kernel message's `parent_header.session`
 * @returns {number | null}
 */
export function actingPage(states, session) {
  /** @type {number | null} */
  let lowest = null;
  for (const [id, state] of states) {
    const named = state?.[AWARENESS_FIELD]?.kernel_client;
    if (typeof named !== "string") continue;
    if (typeof session === "string" && session && named === session) return id;
    if (lowest === null || id < lowest) lowest = id;
  }
  return lowest;
}

/**
 * Whether this page acts on a kernel message answering `session`. A page without a shared
 * document (`awareness` null: collaboration off) always acts, on its own copy; so does a page
 * that sees no page named yet.
 * @param {AwarenessLike | null | undefined} awareness
 * @param {unknown} session
 */
export function actsHere(awareness, session) {
  if (!awareness) return true;
  const acting = actingPage(awareness.getStates(), session);
  return acting === null || acting === awareness.clientID;
}

/**
 * Whether this page is the only one on the document (or the document is not shared). A page
 * that joins others leaves the document as they keep it: what it shows on opening is theirs.
 * @param {AwarenessLike | null | undefined} awareness
 */
export function alone(awareness) {
  if (!awareness) return true;
  for (const [id, state] of awareness.getStates()) {
    if (id !== awareness.clientID && (state?.user || state?.[AWARENESS_FIELD])) return false;
  }
  return true;
}

/**
 * Whether someone else (another user, not this user's other pages) is on the document.
 * @param {AwarenessLike | null | undefined} awareness
 * @param {string} username this page's user
 */
export function othersOn(awareness, username) {
  if (!awareness) return false;
  for (const [id, state] of awareness.getStates()) {
    const other = state?.user?.username;
    if (id !== awareness.clientID && typeof other === "string" && other !== username) return true;
  }
  return false;
}

/** jupyter_server's made-up user (generate_anonymous_user): "Anonymous Lysithea", a uuid4 hex. */
const ANONYMOUS_NAME = /^Anonymous \S/;
const ANONYMOUS_USERNAME = /^[0-9a-f]{32}$/;

/**
 * The identity a click is saved under: JupyterLab's user when the server knows a name; the name
 * a server makes up for an anonymous user ("Anonymous Lysithea") names nobody to a reader, so it
 * is kept only while other people are on the notebook (it tells them apart), else null: the
 * page then says "you" (util/who.js).
 * @param {any} identity `app.serviceManager.user.identity`
 * @param {(username: string) => boolean} othersHere whether another user is on an open notebook
 */
export function clickerIdentity(identity, othersHere) {
  if (!identity || typeof identity !== "object") return null;
  const username = typeof identity.username === "string" ? identity.username : "";
  const name = typeof identity.name === "string" ? identity.name : "";
  const madeUp = ANONYMOUS_NAME.test(name) && ANONYMOUS_USERNAME.test(username);
  return madeUp && !othersHere(username) ? null : identity;
}
