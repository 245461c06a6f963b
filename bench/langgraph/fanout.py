"""The fan-out flow of bench/programs/fanout_parallel.tenx, in LangGraph with ``Send``, for the
fan-out benchmark (bench/src/bin/fanout/ runs it against its own stand-in and prints both side by
side):

    planner --[Send("worker", {"topic": t}) for each topic]--> worker (x N) --> writer --> END

Each worker is an agent -> tool -> agent turn: a scripted chat model asks for the ``fetch`` tool
with its topic, the tool makes a real HTTP call (``POST {url}/fetch``, urllib, to the stand-in
that answers after 20 ms), and the model answers with the result. The planner and the writer
just answer text. ``InMemorySaver``; each run is a new thread.

- ``parallel``: eight topics, eight ``Send``s, so the eight workers run in one super-step;
- ``one``: the same graph with one topic (the one-branch version).

The runs of the two versions are interleaved with the floors under their waits, after 3
unmeasured rounds: a bare fetch (the tool's function called directly: urllib's POST and its
answer read, no LangGraph) and eight bare fetches at once (the same function for the eight topics
on a thread pool of eight made once, the cheapest way to wait for eight blocking calls at once
in Python; LangGraph makes its own pool per run, which is its cost). It prints one JSON object on
its last line: for ``one``, ``parallel``, ``bare`` and ``bare8``, the median and p90 in
microseconds of the wall time and, under ``cpu``, of the process's CPU time (``process_time``:
every thread's user and system time) during one run. With ``LOAD_CONCURRENCY`` set, it then
measures the same four under load (see ``loaded``) and adds them under ``loaded``.

What is comparable, and what differs (said honestly):
- Same shape and steps: the planner's model call; per worker a model call, a tool call over
  loopback HTTP and a model call; the writer's model call. Both validate the tool's arguments
  (pydantic here, JSON Schema in tenx) and write a checkpoint per step (LangGraph per
  super-step). Each worker gets the conversation as the fork found it, as a tenx branch does,
  and its new messages are appended to the thread's (``add_messages``).
- LangGraph runs the tasks of a super-step on a thread pool; its size is ``max_concurrency``
  from the config, which would default to ``min(32, cores + 4)`` (6 on this machine, fewer
  than the eight workers). The runs pass ``max_concurrency = 8``, so all eight fetch at once,
  as tenx's fork does by default.
- urllib opens a connection per call; tenx's ``http`` tool keeps a pool. The bench subtracts
  each side's own floor (urllib here, tenx's client there: one bare fetch for the one-branch
  version, eight at once for the parallel one) before it compares what the frameworks
  themselves cost.
"""

from __future__ import annotations

import json
import operator
import os
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send

TOPICS = ["rust", "tokio", "sqlite", "postgres", "axum", "serde", "regex", "pest"]
WRITER_ANSWER = "The report is written."
URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8791"


@tool
def fetch(topic: str) -> dict:
    """Fetch what is known about a topic."""
    request = urllib.request.Request(
        f"{URL}/fetch",
        data=json.dumps({"topic": topic}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


class ScriptedModel(BaseChatModel):
    """A worker's model, like a tenx scripted model with the turns [fetch(topic), text]: the
    tool call while the worker has no tool result, then a text answer with the result."""

    topic: str = ""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: list[Any], **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            message = AIMessage(content=f"{self.topic}: {last.content}")
        else:
            message = AIMessage(
                content="",
                tool_calls=[{"id": f"call_{self.topic}", "name": "fetch", "args": {"topic": self.topic}}],
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


class TextModel(BaseChatModel):
    """The planner's and the writer's model: one fixed answer."""

    answer: str

    @property
    def _llm_type(self) -> str:
        return "scripted-text"

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.answer))])


PLANNER = TextModel(answer="Eight topics to fetch.")
WRITER = TextModel(answer=WRITER_ANSWER)
WORKERS = {topic: ScriptedModel(topic=topic).bind_tools([fetch]) for topic in TOPICS}


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    topics: list[str]


class WorkerInput(TypedDict):
    topic: str
    messages: list[AnyMessage]


def planner(state: State) -> dict:
    return {"messages": [PLANNER.invoke(state["messages"])]}


def worker(state: WorkerInput) -> dict:
    model = WORKERS[state["topic"]]
    conversation = list(state["messages"])
    call = model.invoke(conversation)
    results = [fetch.invoke(tool_call) for tool_call in call.tool_calls]
    answer = model.invoke([*conversation, call, *results])
    return {"messages": [call, *results, answer]}


def fan_out(state: State) -> list[Send]:
    return [Send("worker", {"topic": topic, "messages": state["messages"]}) for topic in state["topics"]]


def writer(state: State) -> dict:
    return {"messages": [WRITER.invoke(state["messages"])]}


def build():
    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("worker", worker)
    graph.add_node("writer", writer)
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", fan_out, ["worker"])
    graph.add_edge("worker", "writer")
    graph.add_edge("writer", END)
    return graph.compile(checkpointer=InMemorySaver())


def run(graph, topics: list[str], thread: str) -> None:
    config = {"configurable": {"thread_id": thread}, "max_concurrency": len(TOPICS)}
    result = graph.invoke({"messages": [HumanMessage("Research the topics.")], "topics": topics}, config)
    messages = result["messages"]
    fetched = sum(1 for m in messages if isinstance(m, ToolMessage))
    if fetched != len(topics) or messages[-1].content != WRITER_ANSWER:
        raise SystemExit(f"unexpected run: {fetched} tool results, last {messages[-1]!r}")


def summary(samples: list[float]) -> dict:
    samples = sorted(samples)
    return {"median_us": statistics.median(samples), "p90_us": samples[len(samples) * 9 // 10]}


def main() -> None:
    runs = int(os.environ.get("RUNS", "30"))
    graph = build()
    versions = {"one": TOPICS[:1], "parallel": TOPICS}
    names = [*versions, "bare", "bare8"]
    pool = ThreadPoolExecutor(max_workers=len(TOPICS))
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}

    def timed(name: str, index: int, once) -> None:
        started, used = time.perf_counter(), time.process_time()
        once()
        if index >= 3:
            wall[name].append((time.perf_counter() - started) * 1e6)
            cpu[name].append((time.process_time() - used) * 1e6)

    for index in range(3 + runs):
        timed("bare", index, lambda: fetch.func("bare"))
        timed("bare8", index, lambda: list(pool.map(fetch.func, TOPICS)))
        for name, topics in versions.items():
            timed(name, index, lambda: run(graph, topics, f"{name}-{index}"))
    pool.shutdown()
    figures = {name: {**summary(wall[name]), "cpu": summary(cpu[name])} for name in names}
    if int(os.environ.get("LOAD_CONCURRENCY", "0")) > 0:
        figures["loaded"] = loaded(graph, versions)
    print(json.dumps(figures))


def loaded(graph, versions: dict[str, list[str]]) -> dict:
    """Under load, as the Rust side measures it (bench/src/bin/fanout/load.rs): LOAD_CONCURRENCY
    threads each make LOAD_ROUNDS runs (or floors) one after another, started a little apart;
    a batch's figure is the process's CPU time over the batch divided by its runs. LOAD_BATCHES
    batches of each, interleaved after one unmeasured batch; the median and p90 over the
    batches, and the median of runs per second."""
    concurrency = int(os.environ["LOAD_CONCURRENCY"])
    rounds = int(os.environ.get("LOAD_ROUNDS", "2"))
    batches = int(os.environ.get("LOAD_BATCHES", "7"))
    tasks = ThreadPoolExecutor(max_workers=concurrency)
    # Each task's eight fetches at once go through a pool of its own, made once (the floor of
    # the single runs, per task).
    eights = [ThreadPoolExecutor(max_workers=len(TOPICS)) for _ in range(concurrency)]
    works = {
        "bare": lambda task, name: fetch.func("bare"),
        "bare8": lambda task, name: list(eights[task].map(fetch.func, TOPICS)),
        **{
            version: (lambda topics: lambda task, name: run(graph, topics, name))(topics)
            for version, topics in versions.items()
        },
    }
    cpu: dict[str, list[float]] = {name: [] for name in works}
    rate: dict[str, list[float]] = {name: [] for name in works}
    for batch in range(1 + batches):
        for name, once in works.items():

            def task(index: int, name=name, once=once) -> None:
                time.sleep(index * 0.02 / concurrency)
                for round_ in range(rounds):
                    once(index, f"load-{name}-{batch}-{index}-{round_}")

            started, used = time.perf_counter(), time.process_time()
            for future in [tasks.submit(task, index) for index in range(concurrency)]:
                future.result()
            if batch > 0:
                runs = concurrency * rounds
                cpu[name].append((time.process_time() - used) * 1e6 / runs)
                rate[name].append(runs / (time.perf_counter() - started))
    tasks.shutdown()
    for pool in eights:
        pool.shutdown()
    return {name: {"cpu": summary(cpu[name]), "per_second": statistics.median(rate[name])} for name in works}


if __name__ == "__main__":
    main()
