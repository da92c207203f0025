"""Kafka's own tools (kafka-topics, kafka-consumer-groups, ...) run the same way against two
brokers, their output normalised for what legitimately differs (addresses, ids, times) and
compared line by line.

A scenario is a function of a :class:`Transcript`: it runs tools through ``t.tool(...)``, each
run recorded in the transcript as the command, its exit status, its stdout and the meaningful
part of its stderr. :func:`compare` runs one scenario on every broker at once (a thread each:
most of a tool's time is its JVM starting) and asserts that the transcripts are equal.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor

from .apache_kafka import run_tool

TOPICS = "org.apache.kafka.tools.TopicCommand"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"  # kafka.admin.ConfigCommand until Kafka 4.0
CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_PERF = "org.apache.kafka.tools.ConsumerPerformance"

# A client-made member id: "<client.id>-<uuid4>".
_MEMBER_ID = re.compile(r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_ADDRESS = re.compile(r"\b127\.0\.0\.1:\d+\b")
_ACCESSOR = re.compile(r"GeneratedMethodAccessor\d+")
_TOPIC_ID = re.compile(r"TopicId: [A-Za-z0-9_-]{22}")
# A log4j line of the tools' logging (support/kafka_ref/tools-log4j2.yaml): "[date] LEVEL msg".
_LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:,]+\] (\w+) ")


def unique(prefix: str = "kt") -> str:
    """A name no other test on a shared broker uses (the same one is used on every broker)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def normalise(text: str) -> str:
    """``text`` with addresses, member ids and topic ids replaced by placeholders; a member id
    is its client id and a placeholder of the same length, so column widths stay."""
    text = _ADDRESS.sub("HOST:PORT", text)
    # The JVM numbers its reflection accessors as a tool shell's runs happen to need them.
    text = _ACCESSOR.sub("GeneratedMethodAccessorN", text)
    text = _MEMBER_ID.sub(lambda m: "-" + "u" * (len(m.group()) - 1), text)
    return _TOPIC_ID.sub("TopicId: " + "i" * 22, text)


def stderr_lines(stderr: str) -> list[str]:
    """What a tool's stderr says, without its WARN/INFO logging (clients' retries and
    reconnects, whose timing differs from run to run); ERROR lines lose their date."""
    out = []
    skipping = False
    for line in stderr.splitlines():
        m = _LOG_LINE.match(line)
        if m:
            skipping = m.group(1) in ("WARN", "INFO", "DEBUG")
            if not skipping:
                out.append(line[m.end(0) - len(m.group(1)) - 1 :])
            continue
        if not skipping and line.strip():
            out.append(line)
    return out


class Transcript:
    """The record of one scenario's tool runs against one broker."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        self.bootstrap = bootstrap
        self.lines: list[str] = []
        #: Text that differs by broker on purpose (a file per broker), shown as a placeholder.
        self.aliases: dict[str, str] = {}

    def _norm(self, line: str) -> str:
        for text, placeholder in self.aliases.items():
            line = line.replace(text, placeholder)
        return normalise(line.rstrip())

    def tool(
        self,
        main_class: str,
        *args: str,
        input: str | None = None,
        stdout: Callable[[str], Iterable[str]] | None = None,
        stderr: bool = True,
        **kwargs: object,
    ) -> subprocess.CompletedProcess[str]:
        """Run one tool with ``--bootstrap-server`` and record it; ``stdout`` maps its stdout
        to the lines recorded (by default all of them); ``stderr=False`` leaves out stderr."""
        got = run_tool(
            main_class,
            "--bootstrap-server",
            self.bootstrap,
            *args,
            input=input,
            check=False,
            **kwargs,  # type: ignore[arg-type]
        )
        self.lines.append(self._norm(f"$ {main_class.rsplit('.', 1)[-1]} {' '.join(args)}"))
        self.lines.append(f"exit {got.returncode}")
        out = got.stdout.splitlines() if stdout is None else list(stdout(got.stdout))
        self.lines += [self._norm(line) for line in out]
        if stderr:
            self.lines += [
                "[stderr] " + normalise(line.rstrip()) for line in stderr_lines(got.stderr)
            ]
        return got

    def note(self, *lines: object) -> None:
        """Record what the scenario itself observed (counts, parsed values)."""
        self.lines += [str(line) for line in lines]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def compare(
    scenario: Callable[[Transcript], None], brokers: Mapping[str, str], reference: str = "kafka"
) -> dict[str, Transcript]:
    """Run ``scenario`` against every broker of ``brokers`` (name: bootstrap) at once and
    assert that every transcript equals the ``reference`` broker's; the transcripts."""
    transcripts = {name: Transcript(name, bootstrap) for name, bootstrap in brokers.items()}
    with ThreadPoolExecutor(len(transcripts)) as pool:
        for f in [pool.submit(scenario, t) for t in transcripts.values()]:
            f.result()
    want = transcripts[reference].text()
    for name, t in transcripts.items():
        if name == reference:
            continue
        got = t.text()
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(keepends=True),
                got.splitlines(keepends=True),
                fromfile=reference,
                tofile=name,
            )
        )
        assert got == want, f"{name} differs from {reference}:\n{diff}"
    return transcripts


def only(prefix: str, *, header: bool = False) -> Callable[[str], list[str]]:
    """A stdout filter keeping the lines that start with ``prefix`` (names made by this
    scenario, on a broker others share), sorted, and the first line too with ``header``.
    Sorted: Kafka lists groups in the order of its coordinator shards' hash maps, which no
    client may rely on, and kgroup has its own. A table's (``header``) columns are compared
    word by word: the tool pads them to the longest name of every group listed, other
    tests' too."""

    def keep(stdout: str) -> list[str]:
        lines = stdout.splitlines()
        head = lines[:1] if header else []
        kept = head + sorted(line for line in lines[len(head) :] if line.startswith(prefix))
        return [" ".join(line.split()) for line in kept] if header else kept

    return keep
