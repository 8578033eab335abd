"""The parent side: a pool of worker processes, classification, the summary."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ("ok", "navkit_error", "exception", "segfault", "hang", "memory", "wrong")
DEFECTS = ("exception", "segfault", "hang", "memory", "wrong")


def repro(campaign: str, seed: int, index: int) -> str:
    return f"python -m tests.fuzz --campaign {campaign} --seed {seed} --index {index}"


@dataclass
class Defect:
    campaign: str
    seed: int
    index: int
    cls: str
    detail: str

    @property
    def signature(self) -> str:
        """A short key grouping defects of one cause (last line of the detail)."""
        lines = [ln for ln in self.detail.strip().splitlines() if ln.strip()]
        key = lines[-1] if lines else ""
        if self.cls == "exception":
            # the innermost navkit frame, then the exception type
            frames = [ln.strip() for ln in lines if ln.strip().startswith("File ")]
            nk = [f for f in frames if "navkit" in f and "tests/fuzz" not in f]
            loc = nk[-1] if nk else (frames[-1] if frames else "")
            loc = loc.split("/src/")[-1] if "/src/" in loc else loc
            key = f"{key.split(':')[0]} @ {loc}"
        elif self.cls == "wrong":
            msg = key.split("WrongAnswer: ", 1)[-1]
            key = re.split(r"[:(\['\d]", msg, maxsplit=1)[0].strip()
        return f"{self.campaign}/{self.cls}: {key[:200]}"

    def to_dict(self) -> dict:
        return {
            "campaign": self.campaign,
            "seed": self.seed,
            "index": self.index,
            "class": self.cls,
            "detail": self.detail,
            "repro": repro(self.campaign, self.seed, self.index),
        }


@dataclass
class Summary:
    seed: int
    counts: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    defects: list[Defect] = field(default_factory=list)
    seconds: float = 0.0
    restarts: int = 0

    def n_defects(self, campaign: str | None = None) -> int:
        cs = [campaign] if campaign else list(self.counts)
        return sum(self.counts[c][k] for c in cs for k in DEFECTS)

    def table(self) -> str:
        w = max([len("campaign")] + [len(c) for c in self.counts])
        head = f"{'campaign':<{w}} " + " ".join(f"{k:>12}" for k in ("cases", *CLASSES))
        rows = [head, "-" * len(head)]
        tot: Counter = Counter()
        for c in sorted(self.counts):
            n = sum(self.counts[c].values())
            tot.update(self.counts[c])
            rows.append(
                f"{c:<{w}} {n:>12} " + " ".join(f"{self.counts[c][k]:>12}" for k in CLASSES)
            )
        rows.append("-" * len(head))
        rows.append(
            f"{'total':<{w}} {sum(tot.values()):>12} " + " ".join(f"{tot[k]:>12}" for k in CLASSES)
        )
        return "\n".join(rows)

    def signatures(self) -> list[tuple[str, int, Defect]]:
        groups: dict[str, list[Defect]] = defaultdict(list)
        for d in self.defects:
            groups[d.signature].append(d)
        return sorted(((k, len(v), v[0]) for k, v in groups.items()), key=lambda t: (-t[1], t[0]))

    def to_dict(self) -> dict:
        return {
            "seed": self.seed,
            "seconds": round(self.seconds, 1),
            "worker_restarts": self.restarts,
            "campaigns": {
                c: {"cases": sum(v.values()), **{k: v[k] for k in CLASSES}}
                for c, v in sorted(self.counts.items())
            },
            "defects": [d.to_dict() for d in self.defects],
            "signatures": [
                {"signature": s, "count": n, "repro": repro(d.campaign, d.seed, d.index)}
                for s, n, d in self.signatures()
            ],
        }


class Worker:
    """One long-lived worker subprocess."""

    def __init__(self, campaigns: list[str], mem_gib: float, startup_timeout: float) -> None:
        self.campaigns = campaigns
        self.mem_gib = mem_gib
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.buf = b""

    def start(self) -> None:
        env = dict(os.environ)
        env.setdefault("NUMBA_NUM_THREADS", "2")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.worker", "--mem-gib", str(self.mem_gib),
             "--campaigns", ",".join(self.campaigns)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, start_new_session=True,
        )  # fmt: skip
        self.buf = b""
        msg = self._readline(time.monotonic() + self.startup_timeout)
        if msg is None or not json.loads(msg).get("ready"):
            rc = self.stop()
            raise RuntimeError(f"fuzz worker failed to start (rc {rc}, {msg!r})")

    def _readline(self, deadline: float) -> str | None:
        """The next line from the worker, or None on EOF or timeout (self.timed_out)."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        self.timed_out = False
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stop(self) -> int | None:
        p = self.proc
        self.proc = None
        if p is None:
            return None
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the worker's own session (and its threads)
            except ProcessLookupError:
                pass
        rc = p.wait()
        for s in (p.stdin, p.stdout):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        return rc

    def run(self, campaign: str, seed: int, index: int, timeout: float) -> tuple[str, str, bool]:
        """(class, detail, worker_restarted)."""
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        req = json.dumps({"campaign": campaign, "seed": seed, "index": index}) + "\n"
        try:
            self.proc.stdin.write(req.encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._readline(time.monotonic() + timeout)
        if line is not None:
            r = json.loads(line)
            return r["cls"], r["detail"], False
        if self.timed_out:
            self.stop()
            return "hang", f"no answer within {timeout:g} s", True
        rc = self.stop()
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = str(-rc)
            if -rc == signal.SIGKILL:
                return "memory", "worker killed (SIGKILL: out of memory?)", True
            return "segfault", f"worker died from signal {name}", True
        return "exception", f"worker exited with code {rc}", True


def run(
    campaigns: list[str],
    cases: int,
    *,
    seed: int = 0,
    jobs: int = 2,
    timeout: float = 30.0,
    mem_gib: float = 4.0,
    start: int = 0,
    startup_timeout: float = 1200.0,
    log=None,
) -> Summary:
    """Run ``cases`` cases (indices start..start+cases-1) of each campaign."""
    tasks = [(c, i) for i in range(start, start + cases) for c in campaigns]
    summary = Summary(seed)
    lock = threading.Lock()
    t0 = time.monotonic()
    done = [0]
    errors: list[BaseException] = []

    def loop() -> None:
        w = Worker(campaigns, mem_gib, startup_timeout)
        try:
            while True:
                with lock:
                    if not tasks or errors:
                        return
                    c, i = tasks.pop(0)
                cls, detail, restarted = w.run(c, seed, i, timeout)
                with lock:
                    summary.counts[c][cls] += 1
                    summary.restarts += int(restarted)
                    if cls in DEFECTS:
                        d = Defect(c, seed, i, cls, detail)
                        summary.defects.append(d)
                        if log:
                            first = detail.strip().splitlines()[-1] if detail.strip() else ""
                            log(f"[{cls}] {repro(c, seed, i)}  # {first[:160]}")
                    done[0] += 1
                    if log and done[0] % 100 == 0:
                        tot = Counter()
                        for v in summary.counts.values():
                            tot.update(v)
                        log(f"... {done[0]} cases, {time.monotonic() - t0:.0f} s: {dict(tot)}")
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            with lock:
                errors.append(exc)
        finally:
            w.stop()

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    summary.seconds = time.monotonic() - t0
    return summary


def write_json(summary: Summary, path: str | os.PathLike) -> None:
    Path(path).write_text(json.dumps(summary.to_dict(), indent=1))
