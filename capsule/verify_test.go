package capsule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/evalcapsule/evalcapsule/analysis"
	"github.com/evalcapsule/evalcapsule/capsule"
	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/study"
)

func TestVerifyOK(t *testing.T) {
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	v, err := capsule.Verify(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK || len(v.Problems) != 0 || v.Files != len(packedTitles()) || v.Blobs != v.Files+2 {
		t.Fatalf("verification %+v", v)
	}
	if s := v.String(); !strings.HasSuffix(s, ": ok\n") || !strings.Contains(s, c.Descriptor.Digest.String()) {
		t.Errorf("String() = %q", s)
	}
	b, _ := json.Marshal(v)
	var back map[string]any
	json.Unmarshal(b, &back)
	if back["ok"] != true || back["problems"] == nil || back["capsule"] == nil {
		t.Errorf("JSON %s", b)
	}
}

func TestVerifyFindsProblems(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(t *testing.T, layout string)
		path, say string // a problem about path whose text says say
	}{
		{"no run record", func(t *testing.T, layout string) {
			editManifest(t, layout, func(m *ocispec.Manifest) {
				i := layerIndex(t, m, "run.json")
				m.Layers = append(m.Layers[:i], m.Layers[i+1:]...)
			})
		}, "runs/baseline/run.json", "missing file"},
		{"no results", func(t *testing.T, layout string) {
			editManifest(t, layout, func(m *ocispec.Manifest) {
				i := layerIndex(t, m, "results_")
				m.Layers = append(m.Layers[:i], m.Layers[i+1:]...)
			})
		}, "runs/baseline/output/", "results file of done run baseline"},
		{"no samples", func(t *testing.T, layout string) {
			editManifest(t, layout, func(m *ocispec.Manifest) {
				i := layerIndex(t, m, "samples_")
				m.Layers = append(m.Layers[:i], m.Layers[i+1:]...)
			})
		}, "runs/baseline/output/", "samples files"},
		{"record differs", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any)["label"] = "other"
			})
		}, "runs/baseline/run.json", "a different record"},
		{"record not in config", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) { cfg["runs"] = []any{} })
		}, "runs/baseline/run.json", "not in the config"},
		{"simulated hidden", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) { cfg["simulated"] = false })
		}, "config", "simulated"},
		{"study.yaml differs", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) { cfg["study_yaml"] = "study: other\n" })
		}, "study.yaml", "study_yaml"},
		{"schema", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any)["status"] = "finished"
			})
		}, "config", "/runs/0/record/status"},
		{"duplicate records", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				runs := cfg["runs"].([]any)
				cfg["runs"] = append(runs, runs[0])
			})
		}, "config", `2 records of run "baseline"`},
		{"planned run missing", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) { cfg["runs"] = []any{} })
		}, "runs/baseline/run.json", "a record of run baseline (baseline), which study.yaml plans"},
		{"a shell for a command line", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any)["argv"] = []any{"/bin/sh", "-c", "id"}
			})
		}, "runs/baseline/run.json", `/bin/sh -c id has no --output_path`},
		{"other settings", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any)["spec"].(map[string]any)["num_fewshot"] = 3
			})
		}, "runs/baseline/run.json", "settings differ from what study.yaml plans: num_fewshot 3"},
		{"a run the study does not plan", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				runs := cfg["runs"].([]any)
				extra := map[string]any{}
				for k, v := range runs[0].(map[string]any) {
					extra[k] = v
				}
				extra["name"] = "extra"
				cfg["runs"] = append(runs, extra)
			})
		}, "config", `run "extra", which it does not`},
		{"simulated hidden everywhere", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				cfg["simulated"] = false
				cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any)["simulated"] = false
			})
		}, "config", "the lm-eval output of baseline was written by the simulated backend"},
		{"numbers that differ", func(t *testing.T, layout string) {
			editConfig(t, layout, func(cfg map[string]any) {
				ch := cfg["rescore"].(map[string]any)["runs"].([]any)[0].(map[string]any)["checks"].([]any)[0].(map[string]any)
				ch["status"] = "differs"
			})
		}, "config", "packed with --allow-differs"},
		{"corrupt blob", func(t *testing.T, layout string) {
			editManifest(t, layout, func(m *ocispec.Manifest) {
				l := m.Layers[layerIndex(t, m, "report.html")]
				p := filepath.Join(layout, "blobs", "sha256", l.Digest.Encoded())
				b, _ := os.ReadFile(p)
				os.WriteFile(p, bytes.ToUpper(b), 0o644)
			})
		}, "report.html", "digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, layout := packedLayout(t)
			tc.edit(t, layout)
			c := mustOpen(t, layout, capsule.OpenOptions{})
			v, err := capsule.Verify(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range v.Problems {
				found = found || (p.Path == tc.path && strings.Contains(p.Error(), tc.say))
			}
			if v.OK || !found {
				t.Errorf("no problem about %s saying %q in\n%s", tc.path, tc.say, v)
			}
			if !strings.Contains(v.String(), tc.path) {
				t.Errorf("String() does not name %s:\n%s", tc.path, v)
			}
		})
	}
}

// TestSchemaDocsCopy keeps docs/capsule-config.schema.json the same file as
// the schema the package embeds (-update copies it there).
func TestSchemaDocsCopy(t *testing.T) {
	docs := filepath.Join("..", "docs", "capsule-config.schema.json")
	if *update {
		if err := os.WriteFile(docs, capsule.ConfigJSONSchema, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, capsule.ConfigJSONSchema) {
		t.Errorf("%s differs from capsule/schema/config.v1.json; run go test ./capsule -run SchemaDocsCopy -update", docs)
	}
}

// TestSchemaValidatesPackedConfig validates a config that Pack wrote, with
// the tables computed for real (SIMULATED runs), against the schema.
func TestSchemaValidatesPackedConfig(t *testing.T) {
	ctx := context.Background()
	studyDir := t.TempDir()
	writePackStudy(t, studyDir, 50)
	s, err := study.Load(studyDir)
	if err != nil {
		t.Fatal(err)
	}
	att, err := study.Attribute(ctx, s, analysis.AttributionOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := harness.Find(filepath.Join(studyDir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Rescore(ctx, outs, analysis.RescoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c")
	mustPackTables(t, studyDir, out, capsule.PackOptions{PackerVersion: "test"}, att, rep)
	c := mustOpen(t, out, capsule.OpenOptions{})
	if c.Config.Attribution == nil || c.Config.Rescore == nil {
		t.Fatal("tables missing")
	}
	probs, err := capsule.ValidateConfig(c.RawConfig)
	if err != nil || len(probs) != 0 {
		t.Fatalf("%v %+v", err, probs)
	}
	v, err := capsule.Verify(ctx, c)
	if err != nil || !v.OK {
		t.Fatalf("%v\n%s", err, v)
	}
}

func TestSchemaRejects(t *testing.T) {
	_, layout := packedLayout(t)
	c := mustOpen(t, layout, capsule.OpenOptions{})
	for _, tc := range []struct {
		name string
		edit func(cfg map[string]any)
		want []string // problems' What, in order
	}{
		{"missing required", func(cfg map[string]any) { delete(cfg, "runs"); delete(cfg, "packer") }, []string{"config /"}},
		{"wrong types", func(cfg map[string]any) { cfg["simulated"] = "yes"; cfg["format_version"] = "2.0" }, []string{"config /format_version", "config /simulated"}},
		{"bad record", func(cfg map[string]any) {
			delete(cfg["runs"].([]any)[0].(map[string]any)["record"].(map[string]any), "argv")
		}, []string{"config /runs/0/record"}},
		{"bad run name", func(cfg map[string]any) { cfg["runs"].([]any)[0].(map[string]any)["name"] = "../x" }, []string{"config /runs/0/name"}},
		{"future field", func(cfg map[string]any) { cfg["signatures"] = []any{} }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg map[string]any
			json.Unmarshal(c.RawConfig, &cfg)
			tc.edit(cfg)
			b, _ := json.Marshal(cfg)
			probs, err := capsule.ValidateConfig(b)
			if err != nil {
				t.Fatal(err)
			}
			var whats []string
			for _, p := range probs {
				whats = append(whats, p.What)
			}
			if strings.Join(whats, "|") != strings.Join(tc.want, "|") {
				t.Errorf("problems %+v, expected %v", probs, tc.want)
			}
			if tc.name == "missing required" && !strings.Contains(probs[0].Expected, "runs") {
				t.Errorf("problem %+v does not name the field", probs[0])
			}
		})
	}
}

// TestFormatDocumented checks that docs/capsule-format.md names every media
// type, annotation and limit of the format.
func TestFormatDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "capsule-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	names := append([]string{
		capsule.ArtifactType, capsule.ConfigMediaType, capsule.ReplayArtifactType, capsule.MediaReplayReport,
		capsule.ConfigSchema, capsule.AnnotationContentDigest, capsule.AnnotationContentSize,
		"Version " + capsule.FormatVersion, "capsule-config.schema.json", "8 MiB", "4 GiB", "32 GiB", "64 MiB", "| 200 |", "| 60 s |",
		"MaxBlobBytes", "MaxTotalBytes", "MaxDecompressedBytes", "MaxCompressionRatio", "MaxConfigBytes", "IdleTimeout", "TransferTimeout",
		".DEST.unpack-N", ".OUT.tmp-N", "ingest/",
		ocispec.AnnotationTitle, ocispec.AnnotationCreated, "1970-01-01T00:00:00Z", "sha256-",
	}, capsule.LayerMediaTypes...)
	for _, n := range names {
		if !strings.Contains(doc, n) {
			t.Errorf("docs/capsule-format.md does not mention %q", n)
		}
	}
}
