"""The refund-shaped graph of bench/programs/refund_desk.tenx, in LangGraph, for the engine
benchmark (bench/src/bin/engine.rs runs it and prints both side by side).

    agent --(tool call, low risk)--> tools --> agent --(text)--> END
    agent --(tool call, high risk)--> approval [interrupt()] --> tools --> agent --> END

- (a) one user -> agent -> tool -> agent turn on a new thread, ``InMemorySaver``;
- (b) a run that pauses at the refund's approval (``interrupt()``) and its resume with the
  answer (``Command(resume=...)``) on a new thread, ``SqliteSaver`` on a file in WAL mode with
  ``synchronous=NORMAL`` (tenx's SQLite default, so both sides pay the same durability);
- (c) the resident memory of N threads paused at the approval, ``InMemorySaver``.

It prints one JSON object on its last line: medians and p90s in microseconds, RSS in bytes.

What is comparable, and what differs (said honestly):
- Same shape and the same steps: a model call, a tool round, a model call; LangGraph writes a
  checkpoint after every super-step (input, agent, tools/approval, agent), tenx commits its
  thread after every step. Both validate tool arguments against their schema (pydantic here,
  JSON Schema in tenx) and bind the tool list to the model (``bind_tools`` here, the allowed
  tools recorded on the message in tenx).
- The scripted model: a minimal ``BaseChatModel`` that answers from the conversation like the
  tenx scripted model's rules (a regex on the user's text picks the tool call; after a tool
  result it answers with the result). No callbacks, tracing or network on either side.
- tenx does more per step than this graph asks LangGraph to do: input validators, the approval
  package and its fingerprint (SHA-256), approver checks, exactly-once receipts (an in-flight
  marker and a receipt per high-risk call) and the append-only records. The LangGraph approval
  node only asks ``interrupt()`` and checks ``approved``.
- LangGraph's checkpoints keep every version (a history per thread); tenx keeps the latest
  checkpoint per thread plus the records. Both are the documented defaults.
"""

from __future__ import annotations

import gc
import json
import os
import re
import statistics
import sys
import time
import uuid
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped"}


@tool
def issue_refund(order_id: str, amount_cents: int) -> str:
    """Refund an order."""
    return "refunded"


TOOLS = [lookup_order, issue_refund]
HIGH_RISK = {"issue_refund"}
REFUND = re.compile(r"(?i)refund (?P<order>[0-9]+)")
LOOKUP = re.compile(r"(?i)look up (?P<order>[0-9]+)")


class ScriptedModel(BaseChatModel):
    """Answers like the tenx scripted model's rules: a tool call picked by a regex on the
    user's text, then a text answer with the tool's result."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: list[Any], **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        calls = sum(1 for m in messages if isinstance(m, AIMessage))
        if isinstance(last, ToolMessage):
            message = AIMessage(content=f"Your order: {last.content}")
        elif isinstance(last, HumanMessage) and (found := REFUND.search(str(last.content))):
            message = AIMessage(
                content="",
                tool_calls=[{"id": f"call_{calls}", "name": "issue_refund",
                             "args": {"order_id": found["order"], "amount_cents": 500}}],
            )
        elif isinstance(last, HumanMessage) and (found := LOOKUP.search(str(last.content))):
            message = AIMessage(
                content="",
                tool_calls=[{"id": f"call_{calls}", "name": "lookup_order",
                             "args": {"order_id": found["order"]}}],
            )
        else:
            message = AIMessage(content="Ask me to look up or refund an order.")
        return ChatResult(generations=[ChatGeneration(message=message)])


MODEL = ScriptedModel().bind_tools(TOOLS)


def agent(state: MessagesState) -> dict:
    return {"messages": [MODEL.invoke(state["messages"])]}


def after_agent(state: MessagesState) -> Literal["tools", "approval", "__end__"]:
    last = state["messages"][-1]
    if not isinstance(last, AIMessage) or not last.tool_calls:
        return END
    if any(call["name"] in HIGH_RISK for call in last.tool_calls):
        return "approval"
    return "tools"


def approval(state: MessagesState) -> Command[Literal["tools", "agent"]]:
    call = state["messages"][-1].tool_calls[0]
    answer = interrupt({
        "question": f"Refund {call['args']['amount_cents']} cents on order {call['args']['order_id']}?",
        "tool": call["name"],
        "arguments": call["args"],
    })
    if isinstance(answer, dict) and answer.get("approved") is True:
        return Command(goto="tools")
    rejected = ToolMessage(content="The refund was rejected.", tool_call_id=call["id"])
    return Command(goto="agent", update={"messages": [rejected]})


def build(checkpointer):
    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("approval", approval)
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", after_agent)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def summary(samples: list[float]) -> dict:
    samples = sorted(samples)
    return {"median_us": statistics.median(samples), "p90_us": samples[len(samples) * 9 // 10]}


def turn(graph, thread: str) -> None:
    result = graph.invoke({"messages": [HumanMessage("look up 1042")]}, config(thread))
    if not str(result["messages"][-1].content).startswith("Your order:"):
        raise SystemExit(f"unexpected turn result: {result['messages'][-1]}")


def pause_and_resume(graph, thread: str) -> None:
    paused = graph.invoke({"messages": [HumanMessage("refund 1042")]}, config(thread))
    if "__interrupt__" not in paused:
        raise SystemExit("the refund did not pause at its approval")
    done = graph.invoke(Command(resume={"approved": True}), config(thread))
    if done["messages"][-1].content != "Your order: refunded":
        raise SystemExit(f"unexpected resume result: {done['messages'][-1]}")


def timed(count: int, once) -> list[float]:
    samples = []
    for index in range(count):
        started = time.perf_counter()
        once(index)
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    turns = int(os.environ.get("TURNS", "300"))
    resumes = int(os.environ.get("RESUMES", "200"))
    paused = int(os.environ.get("PAUSED", "10000"))
    database = sys.argv[1] if len(sys.argv) > 1 else "langgraph-bench.sqlite"
    out: dict[str, Any] = {}

    memory = build(InMemorySaver())
    for index in range(30):
        turn(memory, f"warm{index}")
    out["turn"] = summary(timed(turns, lambda index: turn(memory, f"t{index}")))

    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.remove(database + suffix)
    connection = sqlite3.connect(database, check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    connection.execute("PRAGMA synchronous=NORMAL")
    durable = build(saver)
    for index in range(20):
        pause_and_resume(durable, f"warm{index}")
    out["pause_resume"] = summary(timed(resumes, lambda index: pause_and_resume(durable, f"r{index}")))
    connection.close()

    if paused > 0:
        holder = build(InMemorySaver())
        gc.collect()
        before = rss_bytes()
        for index in range(paused):
            result = holder.invoke({"messages": [HumanMessage("refund 1042")]}, config(f"p{index}-{uuid.uuid4().hex}"))
            if "__interrupt__" not in result:
                raise SystemExit("a refund did not pause")
        gc.collect()
        after = rss_bytes()
        out["paused"] = {"threads": paused, "rss_bytes": after, "grown_bytes": after - before}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
