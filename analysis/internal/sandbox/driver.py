# The program runner inside the sandbox. It reads one program on stdin and
# executes it the way HF evaluate's code_eval (which lm-eval's code tasks
# call) does: a fresh globals dict, output swallowed, an interval timer for
# the task's timeout, destructive os/shutil/subprocess functions disabled.
# Limits are set before any of the program runs. One JSON line goes to the
# descriptor that was stdout; everything else the program writes is lost.
import builtins, faulthandler, json, os, resource, signal, sys

limits = json.loads(sys.argv[1])
program = sys.stdin.read()
result_fd = os.dup(1)
devnull = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(devnull, fd)
write, exit_now, dumps = os.write, os._exit, json.dumps


def report(outcome, exc_type="", detail=""):
    write(result_fd, (dumps({"outcome": outcome, "type": exc_type, "detail": detail[:500]}) + "\n").encode())
    exit_now(0)


for name, value in (("RLIMIT_AS", limits["memory"]), ("RLIMIT_DATA", limits["memory"]),
                    ("RLIMIT_FSIZE", limits["file_size"]), ("RLIMIT_NPROC", limits["procs"]),
                    ("RLIMIT_CORE", 0)):
    resource.setrlimit(getattr(resource, name), (value, value))
resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu"], limits["cpu"] + 1))


class _Sink:
    def write(self, s):
        return len(s)

    def writelines(self, lines):
        pass

    def flush(self):
        pass

    def read(self, *a):
        raise OSError("not readable")

    readline = readlines = read

    def readable(self):
        return False

    def isatty(self):
        return False


class TimeoutException(Exception):
    pass


def _alarm(signum, frame):
    raise TimeoutException("Timed out!")


def _guard():
    # What code_eval's reliability_guard takes away, so that a program
    # fails here exactly where it failed under lm-eval.
    os.environ["OMP_NUM_THREADS"] = "1"
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    for n in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
              "fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink",
              "fchmod", "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown",
              "getcwd", "chdir"):
        if hasattr(os, n):
            setattr(os, n, None)
    import shutil
    shutil.rmtree = shutil.move = shutil.chown = None
    import subprocess
    subprocess.Popen = None
    builtins.help = None
    for m in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[m] = None


work = limits.get("workdir", "/tmp/work")
os.makedirs(work, exist_ok=True)
os.chdir(work)
_guard()
sys.stdout = sys.stderr = _Sink()
sys.stdin = _Sink()
signal.signal(signal.SIGALRM, _alarm)
signal.setitimer(signal.ITIMER_REAL, limits["timeout"])
try:
    exec(program, {})
    signal.setitimer(signal.ITIMER_REAL, 0)
    report("passed")
except TimeoutException:
    signal.setitimer(signal.ITIMER_REAL, 0)
    report("timed out")
except BaseException as e:
    signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        detail = str(e)
    except BaseException:
        detail = ""
    report("failed", type(e).__name__, detail)
