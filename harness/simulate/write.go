package simulate

import (
	"bufio"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// taskRun is what writing one samples file leaves for the results file.
type taskRun struct {
	leaf    leafTask
	metric  string
	filters []string    // in the order of the file's blocks
	items   [][]float64 // per filter, the metric of each doc in file order
	hash    string      // task_hashes entry
	bytes   int64
	lines   int
}

// writeSamples writes every leaf task's samples file into tmp, in parallel
// across files. Each file depends only on the seed and its task, so the
// bytes do not depend on scheduling; the runs come back in leaf order.
func writeSamples(c *config, tmp string) ([]*taskRun, error) {
	runs := make([]*taskRun, len(c.leaves))
	// Largest files first, so that one big file does not finish last alone.
	order := make([]int, len(c.leaves))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return weight(c.leaves[order[a]]) > weight(c.leaves[order[b]]) })

	workers := min(runtime.GOMAXPROCS(0), len(order))
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		failed   atomic.Bool
		firstErr error
		errOnce  sync.Once
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newLineWriter()
			for i := range next {
				if failed.Load() {
					continue
				}
				run, err := w.writeTask(c, c.leaves[i], tmp)
				if err != nil {
					failed.Store(true)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				runs[i] = run
			}
		}()
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return runs, nil
}

// weight estimates a file's size for scheduling.
func weight(l leafTask) int {
	if l.math != nil {
		return l.docs * 8 // two lines of a few KB per doc
	}
	switch l.subject.style {
	case stylePassage:
		return l.docs * 40
	case styleVignette:
		return l.docs * 16
	}
	return l.docs * 10
}

// lineWriter holds the buffers one worker reuses from line to line, so that
// memory stays at about one line whatever the size of the run.
type lineWriter struct {
	line     []byte
	scratch  []byte
	bw       *bufio.Writer
	docHash  hash.Hash
	taskHash hash.Hash
}

func newLineWriter() *lineWriter {
	return &lineWriter{
		line:     make([]byte, 0, 64<<10),
		bw:       bufio.NewWriterSize(nil, 256<<10),
		docHash:  sha256.New(),
		taskHash: sha256.New(),
	}
}

// countingWriter counts what reaches the file.
type countingWriter struct {
	f *os.File
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *lineWriter) writeTask(c *config, l leafTask, tmp string) (*taskRun, error) {
	path := filepath.Join(tmp, samplesName(l.name, c.dateID))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	cw := &countingWriter{f: f}
	w.bw.Reset(cw)
	w.taskHash.Reset()
	var run *taskRun
	if l.math != nil {
		run, err = w.writeGSM8K(c, l)
	} else if c.mmlu.generative {
		run, err = w.writeLlamaMMLU(c, l)
	} else {
		run, err = w.writeMMLU(c, l)
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: writing %s: %w", path, err)
	}
	run.bytes = cw.n
	run.hash = hex.EncodeToString(w.taskHash.Sum(nil))
	return run, nil
}

// appendHashes appends the three hash fields, and feeds them to the task
// hash as lm-eval's EvaluationTracker does (sha256 over every line's
// doc_hash + prompt_hash + target_hash, in file order).
func (w *lineWriter) appendHashes(dst []byte, docHash, promptHash, targetHash []byte) []byte {
	dst = append(dst, `, "doc_hash": "`...)
	dst = append(dst, docHash...)
	dst = append(dst, `", "prompt_hash": "`...)
	dst = append(dst, promptHash...)
	dst = append(dst, `", "target_hash": "`...)
	dst = append(dst, targetHash...)
	w.taskHash.Write(docHash)
	w.taskHash.Write(promptHash)
	w.taskHash.Write(targetHash)
	return append(dst, '"')
}

// sumHex appends the hex sha256 of h's input.
func sumHex(dst []byte, h hash.Hash) []byte {
	var sum [sha256.Size]byte
	return hex.AppendEncode(dst, h.Sum(sum[:0]))
}

func hexSHA256(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return hex.AppendEncode(nil, sum[:])
}

// gsm8kArg1 is arg_1 of every gsm8k request: the task's generation_kwargs.
const gsm8kArg1 = `{"until": ["Question:", "</s>", "<|im_end|>"], "do_sample": false, "temperature": 0.0}`

func (w *lineWriter) writeGSM8K(c *config, l leafTask) (*taskRun, error) {
	t := l.math
	acc := min(1, max(0, c.GSM8KAccuracy+c.TaskShift[t.name]))
	model := gsm8kModel{accuracy: acc, formatMiss: c.GSM8KFormatMiss, truncated: c.GSM8KTruncated, churn: c.Churn}
	run := &taskRun{leaf: l, metric: "exact_match"}
	var promptHash, targetHash, docHash []byte
	for _, f := range t.filters {
		run.filters = append(run.filters, f.name)
		items := make([]float64, 0, l.docs)
		// lm-eval loops filters outermost: all docs under strict-match, then
		// all again under flexible-extract. A doc is regenerated from its
		// own stream rather than kept from the first block.
		for id := 0; id < l.docs; id++ {
			// The document and its prompt come from the dataset; the answer
			// from the model, whose stream for a document does not depend on
			// the settings, so that runs of one study pair up.
			r := stream(c.DataSeed, "gsm8k", id)
			p := newProblem(r)
			doc := gsm8kDoc{question: p.question, answer: p.solution()}
			target := t.target(&p)
			prompt := t.prompt(c, r, doc.question)
			var churn *rng
			if c.Churn > 0 {
				churn = stream(c.Seed, "gsm8k-churn", id)
			}
			resp := model.respondTo(stream(c.Seed, "gsm8k-model", id), churn, &p, t.finalLead)
			filtered := f.apply(resp)
			em := exactMatch(filtered, target)
			items = append(items, em)

			w.scratch = doc.appendIndent2(w.scratch[:0])
			w.docHash.Reset()
			w.docHash.Write(w.scratch)
			docHash = sumHex(docHash[:0], w.docHash)
			promptHash = append(promptHash[:0], hexSHA256(prompt)...)
			targetHash = append(targetHash[:0], hexSHA256(target)...)

			b := w.line[:0]
			b = append(b, `{"doc_id": `...)
			b = strconv.AppendInt(b, int64(id), 10)
			b = append(b, `, "doc": `...)
			b = doc.appendCompact(b)
			b = append(b, `, "target": `...)
			b = pynum.AppendString(b, target)
			b = append(b, `, "arguments": {"gen_args_0": {"arg_0": `...)
			b = pynum.AppendString(b, prompt)
			b = append(b, `, "arg_1": `...)
			b = append(b, t.arg1...)
			b = append(b, `}}, "resps": [[`...)
			b = pynum.AppendString(b, resp)
			b = append(b, `]], "filtered_resps": [`...)
			b = pynum.AppendString(b, filtered)
			b = append(b, ']')
			if c.f.filterField { // v0.4.7+
				b = append(b, `, "filter": `...)
				b = pynum.AppendString(b, f.name)
				b = append(b, `, "metrics": ["exact_match"]`...)
			}
			b = w.appendHashes(b, docHash, promptHash, targetHash)
			b = append(b, `, "exact_match": `...)
			b = pynum.AppendRepr(b, em)
			b = append(b, "}\n"...)
			w.line = b
			if _, err := w.bw.Write(b); err != nil {
				return nil, err
			}
			run.lines++
		}
		run.items = append(run.items, items)
	}
	return run, nil
}

var continuations = [4]string{" A", " B", " C", " D"}

func (w *lineWriter) writeMMLU(c *config, l leafTask) (*taskRun, error) {
	s := *l.subject
	acc := c.subjectAcc[s.name]
	prefix := mmluPrefix(c.DataSeed, s, c.numFewshot, c.f)
	prefixEsc := pynum.AppendEscaped(nil, prefix)
	// Every prompt of the subject starts with the same few-shot prefix:
	// hash it once and resume from the saved state for each question.
	ph := sha256.New()
	ph.Write([]byte(prefix))
	prefixState, err := ph.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, err
	}
	var targetHashes [4][]byte
	for i := range targetHashes {
		targetHashes[i] = hexSHA256(strconv.Itoa(i))
	}

	run := &taskRun{leaf: l, metric: "acc", filters: []string{"none"}}
	items := make([]float64, 0, l.docs)
	var promptHash, docHash, promptEsc []byte
	for id := 0; id < l.docs; id++ {
		d := newMMLUDoc(stream(c.DataSeed, l.name, id), s)
		text := d.text()
		sc := scoreChoices(stream(c.Seed, "model/"+l.name, id), d.answer, acc)
		a := 0.0
		if argmax(sc.ll) == d.answer {
			a = 1
		}
		items = append(items, a)

		if err := ph.(encoding.BinaryUnmarshaler).UnmarshalBinary(prefixState); err != nil {
			return nil, err
		}
		ph.Write([]byte(text))
		promptHash = sumHex(promptHash[:0], ph)
		w.scratch = d.appendIndent2(w.scratch[:0])
		w.docHash.Reset()
		w.docHash.Write(w.scratch)
		docHash = sumHex(docHash[:0], w.docHash)
		promptEsc = pynum.AppendEscaped(append(promptEsc[:0], prefixEsc...), text)

		b := w.line[:0]
		b = append(b, `{"doc_id": `...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, `, "doc": `...)
		b = d.appendCompact(b)
		// The answer index: logged as the int doc_to_target returns in
		// v0.4.3, as str(target) from v0.4.4.
		if c.f.intTarget {
			b = append(b, `, "target": `...)
			b = strconv.AppendInt(b, int64(d.answer), 10)
			b = append(b, `, "arguments": {`...)
		} else {
			b = append(b, `, "target": "`...)
			b = strconv.AppendInt(b, int64(d.answer), 10)
			b = append(b, `", "arguments": {`...)
		}
		for i, cont := range continuations {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, `"gen_args_`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `": {"arg_0": "`...)
			b = append(b, promptEsc...)
			b = append(b, `", "arg_1": "`...)
			b = append(b, cont...)
			b = append(b, `"}`...)
		}
		b = append(b, `}, "resps": [`...)
		for i := range sc.ll {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '[')
			b = appendLLPair(b, sc.ll[i], sc.greedy[i])
			b = append(b, ']')
		}
		b = append(b, `], "filtered_resps": [`...)
		for i := range sc.ll {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendLLPair(b, sc.ll[i], sc.greedy[i])
		}
		b = append(b, ']')
		if c.f.filterField {
			b = append(b, `, "filter": "none", "metrics": ["acc"]`...)
		}
		b = w.appendHashes(b, docHash, promptHash, targetHashes[d.answer])
		b = append(b, `, "acc": `...)
		b = pynum.AppendRepr(b, a)
		b = append(b, "}\n"...)
		w.line = b
		if _, err := w.bw.Write(b); err != nil {
			return nil, err
		}
		run.lines++
	}
	run.items = append(run.items, items)
	return run, nil
}

// appendLLPair appends a loglikelihood response as lm-eval logs it after
// stringifying every leaf: ["<repr of the float>", "True"|"False"].
func appendLLPair(dst []byte, ll float64, greedy bool) []byte {
	dst = append(dst, `["`...)
	dst = pynum.AppendRepr(dst, ll)
	if greedy {
		return append(dst, `", "True"]`...)
	}
	return append(dst, `", "False"]`...)
}

// writeLlamaMMLU writes a subject of mmlu_llama: the questions of mmlu's
// subject task (same streams), one generate_until request each, the
// response filtered by strict_match (remove_whitespace, take_first).
func (w *lineWriter) writeLlamaMMLU(c *config, l leafTask) (*taskRun, error) {
	s := *l.subject
	acc := c.subjectAcc[s.name]
	run := &taskRun{leaf: l, metric: "exact_match", filters: []string{"strict_match"}}
	items := make([]float64, 0, l.docs)
	var docHash []byte
	for id := 0; id < l.docs; id++ {
		d := newMMLUDoc(stream(c.DataSeed, "mmlu_"+s.name, id), s)
		prompt := llamaMMLUPrompt(c, s, &d)
		target := d.llamaTarget()
		resp := llamaMMLURespond(stream(c.Seed, "model/"+l.name, id), d.answer, acc)
		filtered := strings.TrimLeftFunc(resp, pyIsSpace)
		em := llamaExactMatch(filtered, target)
		items = append(items, em)

		w.scratch = d.appendIndent2(w.scratch[:0])
		w.docHash.Reset()
		w.docHash.Write(w.scratch)
		docHash = sumHex(docHash[:0], w.docHash)

		b := w.line[:0]
		b = append(b, `{"doc_id": `...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, `, "doc": `...)
		b = d.appendCompact(b)
		b = append(b, `, "target": `...)
		b = pynum.AppendString(b, target)
		b = append(b, `, "arguments": {"gen_args_0": {"arg_0": `...)
		b = pynum.AppendString(b, prompt)
		b = append(b, `, "arg_1": `...)
		b = append(b, llamaMMLUArg1...)
		b = append(b, `}}, "resps": [[`...)
		b = pynum.AppendString(b, resp)
		b = append(b, `]], "filtered_resps": [`...)
		b = pynum.AppendString(b, filtered)
		b = append(b, ']')
		if c.f.filterField {
			b = append(b, `, "filter": "strict_match", "metrics": ["exact_match"]`...)
		}
		b = w.appendHashes(b, docHash, hexSHA256(prompt), hexSHA256(target))
		b = append(b, `, "exact_match": `...)
		b = pynum.AppendRepr(b, em)
		b = append(b, "}\n"...)
		w.line = b
		if _, err := w.bw.Write(b); err != nil {
			return nil, err
		}
		run.lines++
	}
	run.items = append(run.items, items)
	return run, nil
}
