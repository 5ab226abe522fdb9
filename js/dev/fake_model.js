// A minimal stand-in for the anywidget model: get/set/on/off/send, plus helpers the
// harness uses to play the kernel's part (trait changes and custom messages).
export class FakeModel {
  constructor(state = {}) {
    this.state = {
      events: [],
      tools: {},
      prompts: [],
      status: { state: "idle", retry: null },
      usage: {},
      settings: { reasoning: "full", thread: "main", model: "claude-test" },
      ...state,
    };
    this.handlers = new Map();
    this.sent = [];
  }
  get(name) {
    return this.state[name];
  }
  set(name, value) {
    this.state[name] = value;
    this.emit(`change:${name}`, value);
  }
  on(name, cb) {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name).add(cb);
  }
  off(name, cb) {
    if (!name) this.handlers.clear();
    else if (!cb) this.handlers.delete(name);
    else this.handlers.get(name)?.delete(cb);
  }
  send(msg) {
    this.sent.push(structuredClone(msg));
  }
  custom(msg) {
    this.emit("msg:custom", msg);
  }
  emit(name, ...args) {
    for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
  }
}
