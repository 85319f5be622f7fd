"""Checks of the evalcapsule Go kernel through Debian's jupyter_client, for
what the conformance suite does not cover: interrupts in both modes,
restart, shutdown, stdin, history, display updates, forged messages, the
cells aborted behind a failing one, malformed requests, hostile peers and
cells.

Run by TestClient (kernel/jupyter_test.go) as
    JUPYTER_PATH=<prefix>/share/jupyter /usr/bin/python3 -m unittest -v client_checks
from this directory. EVALCAPSULE_KERNEL_NAME names the kernelspec with
interrupt_mode "message"; the same name with "-signal" appended, the one
with "signal".
"""

import json
import os
import queue
import shutil
import socket
import struct
import tempfile
import time
import unittest

from jupyter_client.manager import KernelManager
from jupyter_client.session import Session

NAME = os.environ.get("EVALCAPSULE_KERNEL_NAME", "evalcapsule-go")
TIMEOUT = 30
DISPLAY = 'import "github.com/evalcapsule/evalcapsule/kernel/display"\n'


class Kernel:
    """A kernel started through jupyter_client, its log in a file."""

    def __init__(self, name=NAME):
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
        self.km = KernelManager(kernel_name=name)
        self.km.start_kernel(stderr=self.log)
        self.process = self.km.provisioner.process
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=TIMEOUT)

    def close(self):
        self.kc.stop_channels()
        if self.km.is_alive():
            self.km.shutdown_kernel(now=True)
        del self.kc, self.km
        self.log.close()
        os.unlink(self.log.name)

    def log_text(self):
        with open(self.log.name) as f:
            return f.read()

    def collect(self, msg_id, timeout=TIMEOUT):
        """IOPub messages of one request, from busy to idle."""
        msgs = []
        deadline = time.time() + timeout
        while True:
            m = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.time()))
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            msgs.append(m)
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                return msgs

    def wait_running(self, msg_id, timeout=TIMEOUT):
        """Waits for the execute_input of a request: the cell has started."""
        deadline = time.time() + timeout
        while True:
            m = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.time()))
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "execute_input":
                return

    def run(self, code, timeout=TIMEOUT, **kw):
        """Executes code: (execute_reply content, IOPub messages)."""
        msg_id = self.kc.execute(code, **kw)
        reply = self.shell_reply(msg_id, timeout)
        return reply["content"], self.collect(msg_id, timeout)

    def shell_reply(self, msg_id, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while True:
            m = self.kc.get_shell_msg(timeout=max(0.1, deadline - time.time()))
            if m["parent_header"].get("msg_id") == msg_id:
                return m


def outputs(msgs, msg_type):
    return [m["content"] for m in msgs if m["msg_type"] == msg_type]


def stdout(msgs):
    return "".join(c["text"] for c in outputs(msgs, "stream") if c["name"] == "stdout")


class ClientChecks(unittest.TestCase):
    def setUp(self):
        self.k = Kernel()

    def tearDown(self):
        self.k.close()

    def test_kernel_info(self):
        self.k.kc.kernel_info()
        info = self.k.kc.get_shell_msg(timeout=TIMEOUT)["content"]
        self.assertEqual(info["protocol_version"], "5.3")
        self.assertEqual(info["language_info"]["name"], "go")
        self.assertEqual(info["language_info"]["file_extension"], ".go")

    def test_busy_idle_and_counts(self):
        first, msgs = self.k.run("1")
        self.assertEqual([m["msg_type"] for m in msgs][:2], ["status", "execute_input"])
        self.assertEqual(msgs[0]["content"]["execution_state"], "busy")
        second, _ = self.k.run("2")
        self.assertEqual(second["execution_count"], first["execution_count"] + 1)
        silent, msgs = self.k.run("3", silent=True)
        self.assertEqual(silent["execution_count"], second["execution_count"])
        self.assertEqual(outputs(msgs, "execute_input"), [])
        self.assertEqual(outputs(msgs, "execute_result"), [])

    def check_interrupt(self, k):
        msg_id = k.kc.execute("for {\n}")
        # An interrupt stops the running cell: wait until this one runs
        # (execute_input comes once it is the kernel's current cell), not a
        # fixed time, which a loaded machine can outlast.
        k.wait_running(msg_id)
        time.sleep(0.5)
        self.assertTrue(k.kc.hb_channel.is_beating(), "the heartbeat stopped while a cell ran")
        start = time.time()
        k.km.interrupt_kernel()
        reply = k.shell_reply(msg_id, timeout=10)["content"]
        self.assertLess(time.time() - start, 5)
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "Interrupted")
        k.collect(msg_id)
        reply, msgs = k.run("6 * 7")
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(outputs(msgs, "execute_result")[0]["data"]["text/plain"], "42")

    def test_interrupt_message(self):
        self.assertEqual(self.k.km.kernel_spec.interrupt_mode, "message")
        self.check_interrupt(self.k)

    def test_interrupt_signal(self):
        k = Kernel(NAME + "-signal")
        try:
            self.assertEqual(k.km.kernel_spec.interrupt_mode, "signal")
            self.check_interrupt(k)
            # A second SIGINT does not end the kernel either.
            self.check_interrupt(k)
        finally:
            k.close()

    def test_restart(self):
        self.k.run("x := 5")
        reply, _ = self.k.run("x")
        self.assertEqual(reply["status"], "ok")
        old = self.k.km.provisioner.process
        self.k.km.restart_kernel(now=False)
        self.assertEqual(old.wait(timeout=10), 0)
        self.k.kc.wait_for_ready(timeout=TIMEOUT)
        reply, msgs = self.k.run("x")
        self.assertEqual(reply["status"], "error")
        self.assertIn("undefined: x", reply["evalue"])

    def test_shutdown_exit_code(self):
        self.k.run("6 * 7")
        self.k.km.shutdown_kernel(now=False)
        self.assertEqual(self.k.process.wait(timeout=10), 0)

    def test_stdin(self):
        code = 'import "fmt"\nvar name string\nfmt.Print("name? ")\nfmt.Scanln(&name)\nfmt.Println("hello,", name)'
        msg_id = self.k.kc.execute(code, allow_stdin=True)
        req = self.k.kc.get_stdin_msg(timeout=TIMEOUT)
        self.assertEqual(req["msg_type"], "input_request")
        self.assertEqual(req["content"]["prompt"], "name? ")
        self.assertEqual(req["parent_header"]["msg_id"], msg_id)
        self.k.kc.input("gopher")
        reply = self.k.shell_reply(msg_id)["content"]
        self.assertEqual(reply["status"], "ok")
        self.assertIn("hello, gopher", stdout(self.k.collect(msg_id)))
        # An interrupt while the kernel waits for input.
        msg_id = self.k.kc.execute('fmt.Scanln(&name)', allow_stdin=True)
        self.assertEqual(self.k.kc.get_stdin_msg(timeout=TIMEOUT)["msg_type"], "input_request")
        self.k.km.interrupt_kernel()
        reply = self.k.shell_reply(msg_id)["content"]
        self.assertEqual(reply["ename"], "Interrupted")
        # A frontend that cannot answer: the read fails, the cell with it.
        reply, _ = self.k.run('var s string\n_, err := fmt.Scanln(&s)\nerr', allow_stdin=False)
        self.assertEqual(reply["status"], "error")
        self.assertIn("allow_stdin", reply["evalue"])

    def test_history(self):
        for code in ['import "fmt"', 'fmt.Println("hist-one")', "6 * 7", 'fmt.Println("hist-two")']:
            self.k.run(code)
        kc = self.k.kc
        kc.history(hist_access_type="tail", n=2, output=False, raw=True)
        hist = kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual([h[2] for h in hist], ["6 * 7", 'fmt.Println("hist-two")'])
        session, line = hist[0][0], hist[0][1]
        kc.history(hist_access_type="range", session=session, start=line, stop=line + 1, output=True, raw=True)
        hist = kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual(hist, [[session, line, ["6 * 7", "42"]]])
        kc.history(hist_access_type="range", session=0, start=1, output=False, raw=True)
        hist = kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual(len(hist), 4)
        self.k.run('fmt.Println("hist-one")')
        kc.history(hist_access_type="search", pattern="*hist-*", unique=True, output=False, raw=True)
        hist = kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual([h[2] for h in hist], ['fmt.Println("hist-two")', 'fmt.Println("hist-one")'])
        kc.history(hist_access_type="search", pattern="*hist-*", n=1, output=False, raw=True)
        hist = kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual([h[2] for h in hist], ['fmt.Println("hist-one")'])
        # The next session reads this one's from the history file.
        self.k.close()
        self.k = Kernel()
        self.k.kc.history(hist_access_type="range", session=-1, start=1, output=False, raw=True)
        hist = self.k.kc.get_shell_msg(timeout=TIMEOUT)["content"]["history"]
        self.assertEqual(len(hist), 5)
        self.assertEqual(hist[0][0], session)
        self.assertEqual(hist[-1][2], 'fmt.Println("hist-one")')

    def test_update_display_data(self):
        reply, msgs = self.k.run(DISPLAY + 'h := display.New()\nh.Update(display.Text("a"))\nh.Update(display.Text("b"))')
        self.assertEqual(reply["status"], "ok")
        shown = outputs(msgs, "display_data")
        updated = outputs(msgs, "update_display_data")
        self.assertEqual(len(shown), 1)
        self.assertEqual(len(updated), 1)
        display_id = shown[0]["transient"]["display_id"]
        self.assertTrue(display_id)
        self.assertEqual(updated[0]["transient"]["display_id"], display_id)
        self.assertEqual(updated[0]["data"]["text/plain"], "b")
        # A later cell updates the output in place too.
        reply, msgs = self.k.run('h.Update(display.Text("c"))')
        updated = outputs(msgs, "update_display_data")
        self.assertEqual([u["transient"]["display_id"] for u in updated], [display_id])
        self.assertEqual(outputs(msgs, "display_data"), [])

    def test_forged_messages_are_rejected(self):
        marker = tempfile.mktemp()
        code = 'import "os"\nos.WriteFile(%r, nil, 0o644)\nforged := 1' % marker
        kc = self.k.kc
        for key in (b"not the key", b""):  # forged, unsigned
            bad = Session(key=key, session=kc.session.session, username=kc.session.username)
            msg = bad.send(kc.shell_channel.socket, "execute_request", {
                "code": code, "silent": False, "store_history": True,
                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True,
            })
            with self.assertRaises(queue.Empty):
                kc.get_shell_msg(timeout=1)
            self.assertFalse(os.path.exists(marker), "a forged request ran")
        # The kernel runs on, and never saw the variable.
        reply, _ = self.k.run("forged")
        self.assertEqual(reply["status"], "error")
        self.assertIn("undefined: forged", reply["evalue"])
        self.assertIn("invalid message signature", self.k.log_text())

    def test_goroutine_panic(self):
        reply, msgs = self.k.run('import "time"\ngo func() { panic("boom") }()\ntime.Sleep(100 * time.Millisecond)')
        self.assertEqual(reply["status"], "ok")
        err = "".join(c["text"] for c in outputs(msgs, "stream") if c["name"] == "stderr")
        self.assertIn("panic in a goroutine", err)
        self.assertIn("boom", err)
        reply, _ = self.k.run("6 * 7")
        self.assertEqual(reply["status"], "ok")

    def test_stop_on_error(self):
        # Run all: the cells queued behind a failing one are aborted...
        kc = self.k.kc
        first = kc.execute('import "time"\ntime.Sleep(300 * time.Millisecond)\npanic("stop")')
        queued = [kc.execute("6 * 7"), kc.execute("7 * 8")]
        self.assertEqual(self.k.shell_reply(first)["content"]["status"], "error")
        for msg_id in queued:
            self.assertEqual(self.k.shell_reply(msg_id)["content"]["status"], "aborted")
        # ...but a request sent after the client saw the error runs, however
        # soon it follows.
        for _ in range(20):
            reply, _ = self.k.run("undefinedName")
            self.assertEqual(reply["status"], "error")
            reply, _ = self.k.run("6 * 7")
            self.assertEqual(reply["status"], "ok")

    def test_malformed_request(self):
        # Signed, but the content is not JSON: an error reply, not silence.
        kc = self.k.kc
        s = kc.session
        header = s.msg_header("execute_request")
        s.send_raw(kc.shell_channel.socket, [s.pack(header), s.pack({}), s.pack({}), b"this is not JSON"])
        m = self.k.shell_reply(header["msg_id"])
        self.assertEqual(m["msg_type"], "execute_reply")
        self.assertEqual(m["content"]["status"], "error")
        self.assertEqual(m["content"]["ename"], "MalformedMessage")
        self.assertIn("not a JSON object", m["content"]["evalue"])
        self.assertIn("not a JSON object", self.k.log_text())
        reply, _ = self.k.run("6 * 7")
        self.assertEqual(reply["status"], "ok")

    def test_oversized_frame(self):
        # A greeting, then a frame header claiming 2^40 bytes: the kernel
        # closes the connection instead of allocating, and runs on.
        reply, _ = self.k.run("kept := 41")
        self.assertEqual(reply["status"], "ok")
        port = self.k.km.get_connection_info()["shell_port"]
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as c:
            c.sendall(b"\xff" + bytes(8) + b"\x7f\x03\x00NULL" + bytes(16) + b"\x00" + bytes(31))
            c.sendall(b"\x06" + struct.pack(">Q", 1 << 40))
            data = b"x"
            while data:  # the kernel's greeting, then the end
                data = c.recv(4096)
        reply, msgs = self.k.run("kept + 1")
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(outputs(msgs, "execute_result")[0]["data"]["text/plain"], "42")
        self.assertIn("a frame of 1099511627776 bytes", self.k.log_text())

    def test_hostile_cells(self):
        # Unbounded recursion and a huge make fail their cell only.
        reply, _ = self.k.run("kept := 41")
        self.assertEqual(reply["status"], "ok")
        reply, msgs = self.k.run("func f(n int) int { return f(n+1) + 1 }\nf(0)")
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "StackOverflow")
        self.assertIn("of stack", outputs(msgs, "error")[0]["evalue"])
        reply, _ = self.k.run("b := make([]byte, 1<<50)")
        self.assertEqual(reply["ename"], "MemoryError")
        self.assertIn("refused: 1 PiB", reply["evalue"])
        reply, msgs = self.k.run("kept + 1")
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(outputs(msgs, "execute_result")[0]["data"]["text/plain"], "42")

    def test_comm_info(self):
        self.k.kc.comm_info()
        reply = self.k.kc.get_shell_msg(timeout=TIMEOUT)["content"]
        self.assertEqual(reply, {"status": "ok", "comms": {}})

    def complete(self, code):
        msg_id = self.k.kc.complete(code, len(code))
        return self.k.shell_reply(msg_id)["content"]

    def test_completion_lists(self):
        # No match is an empty list, never null; a cell type's fields and
        # methods are offered, after an index too, pointer methods where
        # the value is addressable.
        reply, _ = self.k.run(
            "type mt struct{ A int }\n"
            "func (m mt) Val() int { return m.A }\n"
            "func (m *mt) Ptr() int { return m.A }\n"
            "func mk() mt { return mt{} }\n"
            "x := mt{1}\nouts := []mt{{2}}")
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(self.complete("nosuchnamezz")["matches"], [])
        self.assertEqual(self.complete("x.")["matches"], ["A", "Ptr", "Val"])
        self.assertEqual(self.complete("outs[0].")["matches"], ["A", "Ptr", "Val"])
        self.assertEqual(self.complete("mk().")["matches"], ["A", "Val"])

    def test_min_max_clear(self):
        reply, msgs = self.k.run(
            'import "fmt"\nimport "math"\nimport "slices"\n'
            "m := map[string]int{\"a\": 1}\nclear(m)\nf := 2.5\n"
            "fmt.Println(min(3, 1, 2), max(f, 1), min(0, f), math.IsNaN(max(f, math.NaN())), len(m), slices.Max([]int{4, 9}))")
        self.assertEqual(reply["status"], "ok", reply)
        self.assertEqual(stdout(msgs), "1 2.5 0 true 0 9\n")

    def test_cell_error_type(self):
        # A cell's error type prints with its Error; %w, errors.Is and
        # errors.As find it.
        reply, msgs = self.k.run(
            'import "fmt"\nimport "errors"\n'
            "type myErr struct{ msg string }\n"
            'func (e *myErr) Error() string { return "my: " + e.msg }\n'
            'var base error = &myErr{"boom"}\n'
            'w := fmt.Errorf("ctx: %w", base)\nvar me *myErr\n'
            "fmt.Println(&myErr{\"direct\"}, w, errors.Is(w, base), errors.As(w, &me), me.msg)")
        self.assertEqual(reply["status"], "ok", reply)
        self.assertEqual(stdout(msgs), "my: direct ctx: my: boom true true boom\n")

    def test_cell_type_as_interface(self):
        # A cell type in a compiled struct's interface field: the runner
        # of a sweep.
        reply, msgs = self.k.run(
            'import "context"\nimport "fmt"\n'
            'import "github.com/evalcapsule/evalcapsule/harness"\n'
            'import "github.com/evalcapsule/evalcapsule/study"\n'
            "type myRunner struct{ n int }\n"
            "func (r *myRunner) Run(ctx context.Context, dir string, progress func(harness.Progress)) error { r.n++; return nil }\n"
            "r := &myRunner{}\nopts := study.SweepOptions{Runner: r}\n"
            'opts.Runner.Run(context.Background(), "", nil)\nfmt.Println(r.n)')
        self.assertEqual(reply["status"], "ok", reply)
        self.assertEqual(stdout(msgs), "1\n")

    def test_unsupported_construct_named(self):
        reply, msgs = self.k.run("func seq(yield func(int) bool) {}\nfor x := range seq {\n\t_ = x\n}")
        self.assertEqual(reply["status"], "error")
        self.assertIn("range over a function", reply["evalue"])
        self.assertIn("line 2", "\n".join(outputs(msgs, "error")[0]["traceback"]))


    def result_of(self, code):
        """The text/plain result of a cell that must succeed."""
        reply, msgs = self.k.run(code)
        self.assertEqual(reply["status"], "ok", reply)
        results = outputs(msgs, "execute_result")
        return results[0]["data"]["text/plain"] if results else None

    def test_redefinition_function(self):
        # g and k were declared before f changed: they call the new f.
        self.result_of("func f(a int) int { return a }")
        self.result_of("func g() int { return f(5) }\nfunc k() int { return g() + 1 }")
        self.assertEqual(self.result_of("g()"), "5")
        self.result_of("func f(a int) int { return -a }")
        self.assertEqual(self.result_of("g()"), "-5")
        self.assertEqual(self.result_of("k()"), "-4")
        # A caller that no longer compiles is named, and removed.
        reply, msgs = self.k.run("func f(a, b int) int { return a + b }")
        self.assertEqual(reply["status"], "error")
        self.assertIn("func g", reply["evalue"])
        self.assertIn("no longer compiles", reply["evalue"])
        self.assertIn("not enough arguments in call to f", reply["evalue"])
        reply, _ = self.k.run("g()")
        self.assertIn("undefined: g", reply["evalue"])

    def test_redefinition_variable(self):
        self.result_of("var rate = 1")
        self.result_of("func h() int { return rate }")
        self.result_of("var total = rate * 10")
        self.result_of("rate = 4")
        self.assertEqual(self.result_of("h()"), "4")
        self.result_of("var rate = 2")
        self.assertEqual(self.result_of("h()"), "2")
        self.assertEqual(self.result_of("total"), "20")
        self.result_of("rate = 3")
        self.assertEqual(self.result_of("h()"), "3")
        self.result_of("x := 1\nfunc hx() int { return x }")
        self.result_of("x := 2")
        self.assertEqual(self.result_of("hx()"), "2")

    def test_redefinition_method(self):
        self.result_of("type T struct{ N int }\nfunc (t T) V() int { return 1 }")
        self.result_of("func useT() int { return T{}.V() }")
        self.assertEqual(self.result_of("useT()"), "1")
        self.result_of("func (t T) V() int { return 2 }")
        self.assertEqual(self.result_of("useT()"), "2")

    def test_go_checks(self):
        self.result_of('import "fmt"')
        reply, _ = self.k.run('a := 1\nxx := fmt.Println("p")')
        self.assertEqual(reply["ename"], "CompileError")
        self.assertEqual(reply["evalue"], "assignment mismatch: 1 variable but fmt.Println returns 2 values")
        self.assertIn('    xx := fmt.Println("p")', reply["traceback"])
        self.assertTrue(any(line.endswith(", line 2") for line in reply["traceback"]), reply["traceback"])
        # main runs after the cell's statements.
        reply, msgs = self.k.run('func main() { fmt.Println("main") }\nfmt.Println("first")\nfmt.Println("last")')
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(stdout(msgs), "first\nlast\nmain\n")
        reply, _ = self.k.run("c := 1 +")
        self.assertEqual(reply["evalue"], "expected operand, found the end of the cell")
        self.assertIn("    c := 1 +", reply["traceback"])
        self.assertNotIn("'}'", "\n".join(reply["traceback"]))
        self.result_of("xs := []int{1, 2, 3}")
        reply, _ = self.k.run("xs[5]")
        self.assertEqual(reply["ename"], "panic")
        self.assertEqual(reply["evalue"], "runtime error: index out of range [5] with length 3")
        reply, _ = self.k.run("fmt := 0")
        self.assertEqual(reply["status"], "error")
        self.assertIn('fmt already declared through import of package "fmt"', reply["evalue"])
        self.assertEqual(self.result_of('fmt.Sprint("still ", 1)'), "still 1")
        reply, _ = self.k.run('import "example.com/nosuch"')
        self.assertIn("cells can import the standard library and github.com/evalcapsule/evalcapsule/analysis", reply["evalue"])
        self.assertNotIn("GOPATH", reply["evalue"])

    def run_statuses(self, root):
        """The status of each run.json under root, by run directory."""
        out = {}
        for dirpath, _, files in os.walk(root):
            if "run.json" in files:
                with open(os.path.join(dirpath, "run.json")) as f:
                    out[os.path.basename(dirpath)] = json.load(f)["status"]
        return out

    def test_interrupt_sweep(self):
        # A simulated sweep of the demo study, two runs at a time, each
        # paced to take 20 s: interrupted once a run is under way, the cell
        # ends within 3 s, no run is done or running after it, and a later
        # sweep runs them all.
        root = tempfile.mkdtemp(prefix="sweep-interrupt-")
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        setup = ('import (\n\t"os"\n\t"path/filepath"\n\t"time"\n'
                 '\t"github.com/evalcapsule/evalcapsule/examples"\n'
                 '\t"github.com/evalcapsule/evalcapsule/harness/simulate"\n'
                 '\t"github.com/evalcapsule/evalcapsule/study"\n)\n'
                 'dir := %s\n'
                 'err := os.WriteFile(filepath.Join(dir, study.FileName), examples.DemoStudy, 0o644)\n'
                 'demo, err := study.Load(dir)\n'
                 'len(demo.Plan())') % json.dumps(root)
        reply, msgs = self.k.run(setup)
        self.assertEqual(reply["status"], "ok", reply)
        planned = int(outputs(msgs, "execute_result")[0]["data"]["text/plain"])
        self.assertEqual(planned, 7)
        sweep = ('sw, err := study.Sweep(ctx, demo, study.SweepOptions{Runner: simulate.Runner{Effects: simulate.DefaultEffects(), '
                 'Pace: %s * time.Second}, RunnerKind: "simulated", Simulated: true, Parallel: 2})')
        msg_id = self.k.kc.execute(sweep % "20")
        self.k.wait_running(msg_id)
        deadline = time.time() + TIMEOUT
        while "running" not in self.run_statuses(root).values():
            self.assertLess(time.time(), deadline, "no run started")
            time.sleep(0.05)
        start = time.time()
        self.k.km.interrupt_kernel()
        reply = self.k.shell_reply(msg_id, timeout=TIMEOUT)["content"]
        stopped = time.time() - start
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "Interrupted")
        self.assertNotIn("still running", reply["evalue"])
        self.assertLess(stopped, 3, "the sweep went on for %.1f s after the interrupt" % stopped)
        self.k.collect(msg_id)
        after = self.run_statuses(root)
        self.assertIn("interrupted", after.values(), after)
        for run, status in after.items():
            self.assertNotIn(status, ("done", "running"), "run %s after the interrupt" % run)
        time.sleep(3)
        self.assertEqual(self.run_statuses(root), after, "runs changed after the cell was reported interrupted")
        # Resumable: a sweep without a pace does them all.
        reply, msgs = self.k.run(sweep % "0" + '\nsw.Counts()["done"]')
        self.assertEqual(reply["status"], "ok", reply)
        self.assertEqual(outputs(msgs, "execute_result")[0]["data"]["text/plain"], "7")
        self.assertEqual(set(self.run_statuses(root).values()), {"done"})

    def cpu_seconds(self, pid):
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def test_interrupt_bootstrap(self):
        # A bootstrap of minutes on every CPU, interrupted by SIGINT: the
        # cell ends, the kernel stops using the CPUs, the next cell runs.
        k = Kernel(NAME + "-signal")
        try:
            code = ('import (\n\t"fmt"\n\t"github.com/evalcapsule/evalcapsule/analysis"\n)\n'
                    'xs := make([]float64, 20000)\n'
                    'for i := range xs {\n\txs[i] = float64(i % 5)\n}\n'
                    'fmt.Println("bootstrapping")\n'
                    'lo, hi, err := analysis.BootstrapMeanContext(ctx, xs, 1000000, 0.95, 1)')
            msg_id = k.kc.execute(code)
            deadline = time.time() + TIMEOUT
            while True:
                m = k.kc.get_iopub_msg(timeout=max(0.1, deadline - time.time()))
                if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                    break
            pid = k.process.pid
            before = self.cpu_seconds(pid)
            time.sleep(1)
            busy = self.cpu_seconds(pid) - before
            k.km.interrupt_kernel()
            reply = k.shell_reply(msg_id, timeout=10)["content"]
            self.assertEqual(reply["ename"], "Interrupted")
            self.assertNotIn("still running", reply["evalue"])
            k.collect(msg_id)
            before = self.cpu_seconds(pid)
            time.sleep(1)
            idle = self.cpu_seconds(pid) - before
            self.assertLess(idle, max(0.2, busy / 4), "CPU seconds a second: %.2f bootstrapping, %.2f after the interrupt" % (busy, idle))
            start = time.time()
            reply, msgs = k.run("6 * 7")
            self.assertLess(time.time() - start, 5)
            self.assertEqual(outputs(msgs, "execute_result")[0]["data"]["text/plain"], "42")
        finally:
            k.close()


if __name__ == "__main__":
    unittest.main()
