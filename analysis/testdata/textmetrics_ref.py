"""Reference formulas for analysis/sacrebleu.go, rouge.go and truthfulqa.go.

sacrebleu and rouge-score are not packaged by Debian, so this script writes
out, with Debian's python3, python3-regex and python3-numpy, the computation
each library performs for lm-eval's truthfulqa (sacrebleu 2.x corpus_bleu of
one pair with tokenize="intl", smooth_method="exp", no effective order;
rouge-score 0.1.2 RougeScorer(["rouge1", "rouge2", "rougeLsum"]) without a
stemmer, after lm-eval's " . " -> ".\n"; process_results_mc2 before and
after lm-eval PR #2768, with the C library's exp and with numpy's). Python's own str.split, str.lower, re, regex,
math.exp/log and sum() decide the bits, which is what the Go port must match.

It also writes out lm-eval's bleu and chrf aggregations (sacrebleu
corpus_bleu, corpus_chrf and corpus_ter with their defaults: tokenizer 13a;
chrF character order 6, beta 2, no word n-grams, no epsilon smoothing; TER
lowercased, Tercom's greedy shifts over a beam edit distance) and
lm-eval's bootstrap_stderr over them (random.Random(i) per chunk of
resamples, rnd.choices, sample_stddev).

stdin: one JSON object per line, {"hyp", "ref"}, {"lls", "labels"} or
{"corpus": "bleu"|"chrf"|"ter", "refs", "preds", "iters"} or {"mc2docs": [{"lls",
"labels"}...], "exp": "libm"|"numpy"} (the per-doc accs of the new formula,
then lm-eval's mean and mean_stderr of them);
stdout: one line per input, the results as float.hex().
"""
import collections
import json
import math
import re
import sys

import numpy as np
import regex

INTL = [
    (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
    (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
    (regex.compile(r"(\p{S})"), r" \1 "),
]


def intl(line):
    for pat, rep in INTL:
        line = pat.sub(rep, line)
    return " ".join(line.split())


def ngrams(line):
    toks = line.split()
    c = collections.Counter()
    for n in range(1, 5):
        for i in range(len(toks) - n + 1):
            c[tuple(toks[i:i + n])] += 1
    return c, len(toks)


def bleu(hyp, ref):
    h, hl = ngrams(intl(hyp.rstrip()))
    r, rl = ngrams(intl(ref.rstrip()))
    correct, total = [0] * 4, [0] * 4
    for g, c in h.items():
        total[len(g) - 1] += c
        if g in r:
            correct[len(g) - 1] += min(c, r[g])
    bp = 1.0
    if hl < rl:
        bp = math.exp(1 - rl / hl) if hl > 0 else 0.0
    if not any(correct):
        return 0.0
    prec = [0.0] * 4
    smooth = 1.0
    for n in range(4):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            prec[n] = 100.0 / (smooth * total[n])
        else:
            prec[n] = 100.0 * correct[n] / total[n]
    logs = [-9999999999 if p == 0.0 else math.log(p) for p in prec]
    return bp * math.exp(sum(logs) / 4)


TOK13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tok13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} "
    for pat, rep in TOK13A:
        line = pat.sub(rep, line)
    return " ".join(line.split())


def bleu_stats(hyp, ref):
    h, hl = ngrams(tok13a(hyp.rstrip()))
    r, rl = ngrams(tok13a(ref.rstrip()))
    correct, total = [0] * 4, [0] * 4
    for g, c in h.items():
        total[len(g) - 1] += c
        if g in r:
            correct[len(g) - 1] += min(c, r[g])
    return [hl, rl] + correct + total


def bleu_from_stats(st):
    hl, rl, correct, total = st[0], st[1], st[2:6], st[6:10]
    bp = 1.0
    if hl < rl:
        bp = math.exp(1 - rl / hl) if hl > 0 else 0.0
    if not any(correct):
        return 0.0
    prec = [0.0] * 4
    smooth = 1.0
    for n in range(4):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            prec[n] = 100.0 / (smooth * total[n])
        else:
            prec[n] = 100.0 * correct[n] / total[n]
    logs = [-9999999999 if p == 0.0 else math.log(p) for p in prec]
    return bp * math.exp(sum(logs) / 4)


def char_ngrams(line):
    line = "".join(line.split())
    return [collections.Counter(line[i:i + n] for i in range(len(line) - n + 1)) for n in range(1, 7)]


def chrf_stats(hyp, ref):
    out = []
    for h, r in zip(char_ngrams(hyp), char_ngrams(ref)):
        match = sum(min(c, r[g]) for g, c in h.items() if g in r)
        out += [sum(h.values()) if r else 0, sum(r.values()), match]
    return out


def chrf_from_stats(st):
    factor = 4
    avg_p, avg_r, eff = 0.0, 0.0, 0
    for i in range(6):
        nh, nr, nm = st[3 * i:3 * i + 3]
        if nh > 0 and nr > 0:
            avg_p += nm / nh
            avg_r += nm / nr
            eff += 1
    if eff:
        avg_p /= eff
        avg_r /= eff
    else:
        avg_p = avg_r = 0.0
    if avg_p + avg_r:
        score = (1 + factor) * avg_p * avg_r
        score /= (factor * avg_p) + avg_r
        return 100 * score
    return 0.0


INF = int(1e16)


def ter_ed(hyp, ref):
    """Beam edit distance of hyp (rows) to ref (columns) and its trace."""
    nh, nr = len(hyp), len(ref)
    d = [[(j, "i") for j in range(nr + 1)]] + [[(INF, "x")] * (nr + 1) for _ in range(nh)]
    ratio = nr / nh if hyp else 1
    beam = math.ceil(ratio / 2 + 25) if 25 < ratio / 2 else 25
    for i in range(1, nh + 1):
        diag = math.floor(i * ratio)
        hi = nr + 1 if i == nh else min(nr + 1, diag + beam)
        for j in range(max(0, diag - beam), hi):
            if j == 0:
                d[i][j] = (d[i - 1][0][0] + 1, "d")
                continue
            same = hyp[i - 1] == ref[j - 1]
            for c in ((d[i - 1][j - 1][0] + (0 if same else 1), " " if same else "s"),
                      (d[i - 1][j][0] + 1, "d"), (d[i][j - 1][0] + 1, "i")):
                if d[i][j][0] > c[0]:
                    d[i][j] = c
    ops, i, j = [], nh, nr
    while i > 0 or j > 0:
        op = d[i][j][1]
        ops.append(op)
        if op in " s":
            i, j = i - 1, j - 1
        elif op == "i":
            j -= 1
        else:
            i -= 1
    return d[nh][nr][0], "".join(reversed(ops))


def ter_shift(hyp, ref, checked):
    pre, trace = ter_ed(hyp, ref)
    align, rerr, herr, ph, pr = {}, [], [], -1, -1
    for op in trace:
        if op in " s":
            ph, pr = ph + 1, pr + 1
            align[pr] = ph
            herr.append(int(op == "s"))
            rerr.append(int(op == "s"))
        elif op == "d":  # a hypothesis word only
            ph += 1
            herr.append(1)
        else:  # a reference word only
            pr += 1
            align[pr] = ph
            rerr.append(1)
    best = None

    def pairs():
        for sh in range(len(hyp)):
            for sr in range(len(ref)):
                if abs(sr - sh) > 50:
                    continue
                n = 0
                while hyp[sh + n] == ref[sr + n] and n < 10:
                    n += 1
                    yield sh, sr, n
                    if sh + n == len(hyp) or sr + n == len(ref):
                        break

    for sh, sr, n in pairs():
        if not sum(herr[sh:sh + n]) or not sum(rerr[sr:sr + n]) or sh <= align[sr] < sh + n:
            continue
        prev = -1
        for off in range(-1, n):
            if sr + off == -1:
                idx = 0
            elif sr + off in align:
                idx = align[sr + off] + 1
            else:
                break
            if idx == prev:
                continue
            prev = idx
            block = hyp[sh:sh + n]
            if idx < sh:
                w = hyp[:idx] + block + hyp[idx:sh] + hyp[sh + n:]
            elif idx > sh + n:
                w = hyp[:sh] + hyp[sh + n:idx] + block + hyp[idx:]
            else:
                w = hyp[:sh] + hyp[sh + n:n + idx] + block + hyp[n + idx:]
            cand = (pre - ter_ed(w, ref)[0], n, -sh, -idx, w)
            checked += 1
            if best is None or cand > best:
                best = cand
        if checked >= 1000:
            break
    if best is None:
        return 0, hyp, checked
    return best[0], best[4], checked


def ter_stats(hyp, ref):
    h = " ".join(hyp.rstrip().lower().split()).split()
    r = " ".join(ref.rstrip().lower().split()).split()
    if not r:
        return [len(h), 0.0]
    shifts, checked = 0, 0
    while True:
        delta, w, checked = ter_shift(h, r, checked)
        if checked >= 1000 or delta <= 0:
            break
        shifts += 1
        h = w
    return [shifts + ter_ed(h, r)[0], len(r) / 1]


def ter_from_stats(st):
    edits, length = st
    if length > 0:
        return 100 * (edits / length)
    return 100 * 1.0 if edits > 0 else 0.0


def corpus(agg, items):
    if agg == "ter":
        stats = [ter_stats(p, r) for r, p in items]
        return ter_from_stats([sum(col) for col in zip(*stats)])
    stats = [bleu_stats(p, r) if agg == "bleu" else chrf_stats(p, r) for r, p in items]
    tot = [sum(col) for col in zip(*stats)]
    return bleu_from_stats(tot) if agg == "bleu" else chrf_from_stats(tot)


def bootstrap_stderr(f, xs, iters):
    import random
    res = []
    chunk = min(1000, iters)
    for i in range(iters // chunk):
        rnd = random.Random(i)
        for _ in range(chunk):
            res.append(f(rnd.choices(xs, k=len(xs))))
    mu = sum(res) / len(res)
    return math.sqrt(sum([(x - mu) ** 2 for x in res]) / (len(res) - 1))


def rtok(text):
    text = re.sub(r"[^a-z0-9]+", " ", text.lower())
    return [t for t in re.split(r"\s+", text) if re.match(r"^[a-z0-9]+$", t)]


def fmeasure(p, r):
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def rouge_n(t, p, n):
    tg = collections.Counter(tuple(t[i:i + n]) for i in range(len(t) - n + 1))
    pg = collections.Counter(tuple(p[i:i + n]) for i in range(len(p) - n + 1))
    inter = sum(min(c, pg[g]) for g, c in tg.items())
    return fmeasure(inter / max(sum(pg.values()), 1), inter / max(sum(tg.values()), 1))


def lcs_ind(ref, can):
    t = [[0] * (len(can) + 1) for _ in range(len(ref) + 1)]
    for i in range(1, len(ref) + 1):
        for j in range(1, len(can) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if ref[i - 1] == can[j - 1] else max(t[i - 1][j], t[i][j - 1])
    i, j, out = len(ref), len(can), []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.insert(0, i - 1)
            i, j = i - 1, j - 1
        elif t[i][j - 1] > t[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return out


def rouge_lsum(target, pred):
    refs = [rtok(s) for s in target.split("\n") if len(s)]
    cans = [rtok(s) for s in pred.split("\n") if len(s)]
    if not refs or not cans:
        return 0.0
    m, n = sum(map(len, refs)), sum(map(len, cans))
    if not m or not n:
        return 0.0
    cr, cc = collections.Counter(), collections.Counter()
    for s in refs:
        cr.update(s)
    for s in cans:
        cc.update(s)
    hits = 0
    for r in refs:
        for i in sorted(set().union(*[lcs_ind(r, c) for c in cans])):
            tok = r[i]
            if cc[tok] > 0 and cr[tok] > 0:
                hits += 1
                cc[tok] -= 1
                cr[tok] -= 1
    return fmeasure(hits / n, hits / m)


def rouge_l(t, p):
    if not t or not p:
        return 0.0
    n = len(lcs_ind(t, p))
    return fmeasure(n / len(p), n / len(t))


def rouge(ref, pred):
    ref, pred = ref.replace(" . ", ".\n"), pred.replace(" . ", ".\n")
    t, p = rtok(ref), rtok(pred)
    return [rouge_n(t, p, 1) * 100, rouge_n(t, p, 2) * 100, rouge_lsum(ref, pred) * 100, rouge_l(t, p)]


def mc2(lls, labels, exp):
    probs = exp(lls)
    norm = probs / np.sum(probs)
    new = np.sum(norm[np.array(labels) == 1])
    k = list(labels).index(0)
    pt, pf = exp(lls[:k]), exp(lls[k:])
    pt = pt / (sum(pt) + sum(pf))
    return [new, sum(pt)]


def np_exp(xs):
    # numpy's own exp: on AVX512F machines a SIMD routine that rounds
    # otherwise than the C library's in about a quarter of the cases.
    return np.exp(np.array(xs))


def libm_exp(xs):
    # The C library's exp, as numpy calls it where it has no SIMD routine.
    return np.array([math.exp(x) for x in xs])


for line in sys.stdin:
    d = json.loads(line)
    if "mc2docs" in d:
        exp = libm_exp if d["exp"] == "libm" else np_exp
        accs = [mc2(x["lls"], x["labels"], exp)[0] for x in d["mc2docs"]]
        mu = sum(accs) / len(accs)
        sd = math.sqrt(sum([(x - mu) ** 2 for x in accs]) / (len(accs) - 1))
        vals = accs + [mu, sd / math.sqrt(len(accs))]
    elif "corpus" in d:
        items = list(zip(d["refs"], d["preds"]))
        f = lambda xs: corpus(d["corpus"], xs)
        vals = [f(items), bootstrap_stderr(f, items, d["iters"])]
    elif "lls" in d:
        vals = mc2(d["lls"], d["labels"], libm_exp) + mc2(d["lls"], d["labels"], np_exp)
    else:
        vals = [bleu(d["hyp"], d["ref"])] + rouge(d["ref"], d["hyp"])
    print(" ".join(float(v).hex() for v in vals))
