/**
 * Node has no DOM: this small one is enough for the views' `h()`-built elements, records every
 * element made (`created`), and refuses HTML parsing (`innerHTML`, `insertAdjacentHTML`), so a
 * test fails if model or tool text ever reaches a parser. `install()` makes it the global
 * `document`; import the modules under test after it.
 */

export class FakeNode {
  constructor() {
    /** @type {FakeNode[]} */
    this.childNodes = [];
    /** @type {FakeNode | null} */
    this.parentNode = null;
  }
  get firstChild() {
    return this.childNodes[0] ?? null;
  }
  get nextSibling() {
    const siblings = this.parentNode?.childNodes ?? [];
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }
  get textContent() {
    return this.childNodes.map((child) => child.textContent).join("");
  }
  appendChild(node) {
    return this.insertBefore(node, null);
  }
  insertBefore(node, before) {
    node.parentNode?.removeChild(node);
    const at = before === null ? this.childNodes.length : this.childNodes.indexOf(before);
    this.childNodes.splice(at, 0, node);
    node.parentNode = this;
    return node;
  }
  removeChild(node) {
    this.childNodes.splice(this.childNodes.indexOf(node), 1);
    node.parentNode = null;
    return node;
  }
  replaceChildren(...nodes) {
    for (const child of [...this.childNodes]) this.removeChild(child);
    for (const node of nodes) this.appendChild(node);
  }
  remove() {
    this.parentNode?.removeChild(this);
  }
  hasChildNodes() {
    return this.childNodes.length > 0;
  }
}

export class FakeText extends FakeNode {
  constructor(data) {
    super();
    this.data = String(data);
  }
  get textContent() {
    return this.data;
  }
  set textContent(value) {
    this.data = String(value);
  }
  appendData(more) {
    this.data += more;
  }
}

export class FakeElement extends FakeNode {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
    this.className = "";
    this.hidden = false;
    this.disabled = false;
    this.value = "";
    this.dataset = {};
    /** @type {Map<string, Function[]>} */
    this.listeners = new Map();
  }
  get textContent() {
    return super.textContent;
  }
  set textContent(value) {
    this.replaceChildren(new FakeText(value));
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }
  hasAttribute(name) {
    return this.attributes.has(name);
  }
  addEventListener(type, listener) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  dispatchEvent(event) {
    for (const listener of this.listeners.get(event.type) ?? []) listener(event);
  }
  click() {
    if (!this.disabled) this.dispatchEvent({ type: "click" });
  }
  focus() {}
  set innerHTML(_html) {
    throw new Error("model text must never be parsed as HTML");
  }
  insertAdjacentHTML() {
    throw new Error("model text must never be parsed as HTML");
  }
  /** Descendant elements whose class list has `name`. */
  find(name) {
    return this.all().filter((el) => el.className.split(" ").includes(name));
  }
  /** A tag name only: the first descendant element with it. */
  querySelector(selector) {
    if (!/^[a-z]+$/.test(selector)) throw new Error(`fakedom: unsupported selector ${selector}`);
    return this.tags(selector)[0] ?? null;
  }
  /** Descendant elements with this tag name. */
  tags(tag) {
    return this.all().filter((el) => el.tagName === tag.toUpperCase());
  }
  /** Every descendant element, in document order. */
  all() {
    return this.childNodes
      .filter((child) => child instanceof FakeElement)
      .flatMap((child) => [child, ...child.all()]);
  }
}

/** @type {string[]} every tag created */
export const created = [];

/** Make this the global DOM (`document`, `Node`: dom.js's append() tells nodes by it). */
export function install() {
  globalThis.Node = FakeNode;
  globalThis.document = /** @type {any} */ ({
    createElement(tag) {
      created.push(tag);
      return new FakeElement(tag);
    },
    createTextNode: (data) => new FakeText(data),
  });
}
