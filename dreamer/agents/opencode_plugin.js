// dreamer: OpenCode plugin written by `dream opencode install`; `dream opencode uninstall` removes it.
// It hands each session its long-term memory (the block `dream hook session-start` prints, added
// to the system prompt) and, each time a session goes idle, hands its messages to
// `dream hook session-idle`, which stores the turns not stored yet (of a tool's output only
// the head goes, for dreamer to keep the outcome and hold any instruction in it).
// Nothing it does can fail OpenCode: a missing or failing `dream` leaves the session as it was.
import { spawn } from "node:child_process"

const DREAM = __DREAM__ // the dream command
const PIN = __PIN__ // ["-w", workspace] when the install pinned one
const MISSING = __MISSING__ // what the agent is told when `dream` cannot be found

function dream(args, input) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(DREAM, [...args, ...PIN], { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      resolve({ missing: true })
      return
    }
    child.on("error", (error) => resolve({ missing: error?.code === "ENOENT" }))
    child.stdout.on("data", (data) => (out += data))
    child.on("close", (code) => resolve({ out: code === 0 ? out : "" }))
    child.stdin.on("error", () => {})
    child.stdin.end(input)
  })
}

const OUTPUT_CHARS = 4000 // of a tool's output or error: what dreamer reads for its outcome

const head = (text) => (typeof text === "string" ? text.slice(0, OUTPUT_CHARS) : undefined)

// A tool part with the head of its output, a file part without its bytes.
function trimmed(message) {
  const parts = (message.parts ?? []).map((part) => {
    if (part.type === "tool") {
      const { status, input, title, output, error } = part.state ?? {}
      return { ...part, state: { status, input, title, output: head(output), error: head(error) } }
    }
    if (part.type === "file") return { ...part, url: undefined, source: undefined }
    return part
  })
  return { info: message.info, parts }
}

export const Dreamer = async ({ client, directory }) => {
  const memory = new Map() // session id -> its memory block, asked for once per session

  function block(sessionID) {
    if (!memory.has(sessionID)) {
      const start = { session_id: sessionID, cwd: directory, hook_event_name: "SessionStart", source: "startup" }
      memory.set(
        sessionID,
        dream(["hook", "session-start"], JSON.stringify(start)).then((done) => {
          if (done.missing) return MISSING
          try {
            return JSON.parse(done.out).hookSpecificOutput.additionalContext ?? ""
          } catch {
            return "" // no workspace here yet, or nothing to say
          }
        }),
      )
    }
    return memory.get(sessionID)
  }

  return {
    "experimental.chat.system.transform": async (input, output) => {
      if (!input?.sessionID) return
      const text = await block(input.sessionID)
      if (text) output.system.push(text)
    },
    event: async ({ event }) => {
      if (event?.type !== "session.idle") return
      const id = event.properties?.sessionID
      try {
        const session = await client.session.get({ path: { id } })
        if ((session?.data ?? session)?.parentID) return // a subagent's: its prompts are the agent's
        const answer = await client.session.messages({ path: { id } })
        const messages = (answer?.data ?? answer ?? []).map(trimmed)
        const idle = { session_id: id, cwd: directory, hook_event_name: "SessionIdle", messages }
        await dream(["hook", "session-idle"], JSON.stringify(idle))
      } catch {
        // the session goes on; the next idle hands the turn over again
      }
    },
  }
}
