package harness_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/harness"
	"github.com/evalcapsule/evalcapsule/internal/fixtures"
)

// smiFixture reads one of the real nvidia-smi captures shared with the
// project (see package internal/fixtures: skipped when missing, unless CI).
func smiFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "nvidia-smi"), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	h200Bundle = "nvidia_gpu_exporter-linux-x86_64__nvidia-h200__590.48.01.txt"
	h100Bundle = "nvidia_gpu_exporter-linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
)

// bundleSection returns the body of one section of an nvidia_gpu_exporter
// capture bundle: the lines after "# <phase> :: <name>..." and its closing
// rule, up to the next rule, without trailing blank lines. The bundles are
// a test-input format, not something nvidia-smi prints, so this stays here.
func bundleSection(t *testing.T, b []byte, header string) []byte {
	t.Helper()
	const rule = "################"
	lines := strings.Split(string(b), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "# "+header) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("no section %q in the capture bundle", header)
	}
	i := start + 1
	for i < len(lines) && !strings.HasPrefix(lines[i], rule) {
		i++
	}
	var body []string
	for i++; i < len(lines) && !strings.HasPrefix(lines[i], rule); i++ {
		body = append(body, lines[i])
	}
	for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
		body = body[:len(body)-1]
	}
	if len(body) == 0 {
		t.Fatalf("section %q is empty", header)
	}
	return []byte(strings.Join(body, "\n") + "\n")
}

// csvNoHeaderNoUnits turns the bundles' `--format=csv` capture of every
// field (header row, units in values) into what
// `--query-gpu=<GPUQueryFields> --format=csv,noheader,nounits` prints: the
// columns of GPUQueryFields in that order, units dropped.
func csvNoHeaderNoUnits(t *testing.T, section []byte) []byte {
	t.Helper()
	rows := strings.Split(strings.TrimSpace(string(section)), "\n")
	header := strings.Split(rows[0], ", ")
	col := map[string]int{}
	unit := map[string]string{}
	for i, h := range header {
		name, u, _ := strings.Cut(h, " [")
		col[name] = i
		unit[name] = strings.TrimSuffix(u, "]")
	}
	var out strings.Builder
	for _, row := range rows[1:] {
		vals := strings.Split(row, ", ")
		if len(vals) != len(header) {
			t.Fatalf("row has %d values for %d columns", len(vals), len(header))
		}
		var picked []string
		for _, f := range strings.Split(harness.GPUQueryFields, ",") {
			i, ok := col[f]
			if !ok {
				t.Fatalf("the capture has no %s column", f)
			}
			v := vals[i]
			if u := unit[f]; u != "" {
				v = strings.TrimSuffix(v, " "+u)
			}
			picked = append(picked, v)
		}
		out.WriteString(strings.Join(picked, ", ") + "\n")
	}
	return []byte(out.String())
}

func TestParseNvidiaSmiXMLFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want harness.NvidiaSmi
	}{
		{"telegraf-a100-sxm4-v12.xml", harness.NvidiaSmi{
			DriverVersion: "535.54.03", CUDAVersion: "12.2",
			AttachedGPUs: 4, // the file keeps one <gpu> of the four
			GPUs: []harness.GPU{{
				Index: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-513536b6-7d19-9063-b049-1e69664bb298",
				Serial: "1650522003820", PCIBusID: "00000000:01:00.0", VBIOS: "92.00.36.00.02",
				DriverVersion: "535.54.03", CUDAVersion: "12.2",
				MemoryTotalMiB: 81920, // not 19968, the total of each MIG slice
				Architecture:   "Ampere", MIGMode: "Enabled",
			}},
		}},
		{"telegraf-rtx-4000-sff-ada-v13.xml", harness.NvidiaSmi{
			DriverVersion: "595.84", CUDAVersion: "13.2", AttachedGPUs: 1,
			GPUs: []harness.GPU{{
				Index: 0, Name: "NVIDIA RTX 4000 SFF Ada Generation", UUID: "GPU-37037c3f-65c8-ec4d-24a9-420204ad8026",
				Serial: "REDACTED", PCIBusID: "00000000:06:00.0", VBIOS: "95.04.53.00.01",
				DriverVersion: "595.84", CUDAVersion: "13.2", MemoryTotalMiB: 20475,
				Architecture: "Ada Lovelace", MIGMode: "", // N/A
			}},
		}},
		{"telegraf-tesla-t4.xml", harness.NvidiaSmi{
			DriverVersion: "515.105.01", CUDAVersion: "11.7", AttachedGPUs: 1,
			GPUs: []harness.GPU{{
				Index: 0, Name: "Tesla T4", UUID: "GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
				Serial: "0000000000000", PCIBusID: "00000000:00:1E.0", VBIOS: "90.04.84.00.06",
				DriverVersion: "515.105.01", CUDAVersion: "11.7", MemoryTotalMiB: 15360,
				Architecture: "Turing",
			}},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := harness.ParseNvidiaSmiXML(smiFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseNvidiaSmiXMLTolerant(t *testing.T) {
	// Unknown elements at every level, "N/A" and "[N/A]" values, a GPU
	// without <pci> (the id attribute stands in), a missing memory total.
	doc := `<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v99.dtd">
<nvidia_smi_log>
	<future_field><nested>x</nested></future_field>
	<driver_version>600.1</driver_version>
	<cuda_version>N/A</cuda_version>
	<attached_gpus>2</attached_gpus>
	<gpu id="00000000:41:00.0">
		<product_name>NVIDIA B200</product_name>
		<uuid>GPU-aaaaaaaa-0000-0000-0000-000000000001</uuid>
		<serial>[N/A]</serial>
		<vbios_version> 97.00.01 </vbios_version>
		<fb_memory_usage><total>183359 MiB</total><used>1 MiB</used></fb_memory_usage>
		<new_section><total>5 MiB</total></new_section>
	</gpu>
	<gpu id="00000000:42:00.0">
		<product_name>NVIDIA B200</product_name>
		<uuid>GPU-aaaaaaaa-0000-0000-0000-000000000002</uuid>
		<pci><pci_bus_id>00000000:42:00.0</pci_bus_id></pci>
	</gpu>
</nvidia_smi_log>`
	got, err := harness.ParseNvidiaSmiXML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := harness.NvidiaSmi{DriverVersion: "600.1", AttachedGPUs: 2, GPUs: []harness.GPU{
		{Index: 0, Name: "NVIDIA B200", UUID: "GPU-aaaaaaaa-0000-0000-0000-000000000001",
			PCIBusID: "00000000:41:00.0", VBIOS: "97.00.01", DriverVersion: "600.1", MemoryTotalMiB: 183359},
		{Index: 1, Name: "NVIDIA B200", UUID: "GPU-aaaaaaaa-0000-0000-0000-000000000002",
			PCIBusID: "00000000:42:00.0", DriverVersion: "600.1"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseNvidiaSmiXMLErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		line            int
	}{
		{"empty", "", "no XML element", 0},
		{"not nvidia-smi", "<html><body/></html>", "expected element type <nvidia_smi_log>", 0},
		{"truncated", "<nvidia_smi_log>\n<gpu id=\"0\">\n<uuid>GPU-1", "unexpected EOF", 3},
		{"error text", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "no XML element", 0},
		{"bad memory", "<nvidia_smi_log><gpu id=\"x\"><fb_memory_usage><total>lots</total></fb_memory_usage></gpu></nvidia_smi_log>",
			`gpu[0] (x) fb_memory_usage/total: unrecognised nvidia-smi output: "lots" is not a size in MiB`, 0},
		{"bad count", "<nvidia_smi_log><attached_gpus>two</attached_gpus></nvidia_smi_log>", `attached_gpus`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := harness.ParseNvidiaSmiXML([]byte(tc.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, harness.ErrNvidiaSmiOutput) {
				t.Errorf("%v does not wrap ErrNvidiaSmiOutput", err)
			}
			var fe *harness.FileError
			if !errors.As(err, &fe) || fe.Line != tc.line {
				t.Errorf("%v: want a FileError at line %d", err, tc.line)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "nvidia-smi -q -x") {
				t.Errorf("error %q does not start with the command and mention %q", err, tc.want)
			}
		})
	}
}

// TestNvidiaSmiCaptureBundles reads the --version, default-table, -q, -L and
// --query-gpu sections of the real H200 and H100 captures.
func TestNvidiaSmiCaptureBundles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want harness.GPU
	}{
		{h200Bundle, harness.GPU{
			Index: 0, Name: "NVIDIA H200", UUID: "GPU-00000000-0000-0000-0000-000000000000",
			DriverVersion: "590.48.01", MemoryTotalMiB: 143771, PCIBusID: "00000000:83:00.0",
			VBIOS: "96.00.A5.00.03", Serial: "0000000000000", ComputeCap: "9.0",
		}},
		{h100Bundle, harness.GPU{
			Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-0000-0000-0000-000000000000",
			DriverVersion: "590.48.01", MemoryTotalMiB: 81559, PCIBusID: "00000000:00:09.0",
			VBIOS: "96.00.A5.00.01", Serial: "0000000000000", ComputeCap: "9.0",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b := smiFixture(t, tc.file)

			v, err := harness.ParseNvidiaSmiVersion(bundleSection(t, b, "capabilities :: version"))
			if err != nil {
				t.Fatal(err)
			}
			if want := (harness.NvidiaSmiVersion{NvidiaSmi: "590.48.01", NVML: "590.48", DriverVersion: "590.48.01", CUDAVersion: "13.1"}); v != want {
				t.Errorf("--version: got %+v, want %+v", v, want)
			}
			// The default table's banner and -q's header carry the same
			// two versions, for drivers without --version.
			for _, sec := range []string{"idle :: nvidia-smi (default table)", "idle :: query (-q)", "load :: query (-q)"} {
				v, err := harness.ParseNvidiaSmiVersion(bundleSection(t, b, sec))
				if err != nil {
					t.Fatalf("%s: %v", sec, err)
				}
				if v.DriverVersion != "590.48.01" || v.CUDAVersion != "13.1" {
					t.Errorf("%s: got %+v", sec, v)
				}
			}

			for _, sec := range []string{"idle :: query-gpu", "load :: query-gpu"} {
				gpus, err := harness.ParseGPUQueryCSV(csvNoHeaderNoUnits(t, bundleSection(t, b, sec)))
				if err != nil {
					t.Fatalf("%s: %v", sec, err)
				}
				if len(gpus) != 1 || gpus[0] != tc.want {
					t.Errorf("%s: got %+v\nwant [%+v]", sec, gpus, tc.want)
				}
			}

			list := strings.TrimSpace(string(bundleSection(t, b, "capabilities :: list (-L)")))
			if want := fmt.Sprintf("GPU 0: %s (UUID: %s)", tc.want.Name, tc.want.UUID); list != want {
				t.Errorf("-L says %q, the CSV %q", list, want)
			}
		})
	}
}

func TestParseGPUQueryCSV(t *testing.T) {
	in := "0, NVIDIA H100 80GB HBM3, GPU-3f1c0e0a-1111-2222-3333-444455556666, 550.54.15, 81559, 00000000:18:00.0, 96.00.89.00.01, 1654922012345, 9.0\r\n" +
		"\n" +
		"  1 ,NVIDIA H100 80GB HBM3,GPU-3f1c0e0a-1111-2222-3333-777788889999 ,550.54.15, [N/A] ,00000000:2A:00.0,[N/A],[N/A],[Not Supported]  \n" +
		"2, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 550.54.15, 81559 MiB, 00000000:3A:00.0, 96.00.89.00.01, 0000000000000, 9.0"
	got, err := harness.ParseGPUQueryCSV([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.GPU{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-3f1c0e0a-1111-2222-3333-444455556666", DriverVersion: "550.54.15",
			MemoryTotalMiB: 81559, PCIBusID: "00000000:18:00.0", VBIOS: "96.00.89.00.01", Serial: "1654922012345", ComputeCap: "9.0"},
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-3f1c0e0a-1111-2222-3333-777788889999", DriverVersion: "550.54.15",
			PCIBusID: "00000000:2A:00.0"},
		// A masked capture's identifiers are kept as printed.
		{Index: 2, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-0000-0000-0000-000000000000", DriverVersion: "550.54.15",
			MemoryTotalMiB: 81559, PCIBusID: "00000000:3A:00.0", VBIOS: "96.00.89.00.01", Serial: "0000000000000", ComputeCap: "9.0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	if gpus, err := harness.ParseGPUQueryCSV(nil); err != nil || len(gpus) != 0 {
		t.Errorf("empty output: %v, %v; want no GPUs and no error", gpus, err)
	}
}

func TestParseGPUQueryCSVErrors(t *testing.T) {
	ok := "0, Tesla T4, GPU-d37e67a5-91dd-3774-a5cb-99096249601a, 515.105.01, 15360, 00000000:00:1E.0, 90.04.84.00.06, 0000000000000, 7.5\n"
	for _, tc := range []struct {
		name, in string
		line     int
		field    string
		want     string
	}{
		{"too few fields", ok + "1, Tesla T4, GPU-x, 515.105.01\n", 2, "", "4 fields, want 9"},
		{"header row", "index, name, uuid, driver_version, memory.total [MiB], pci.bus_id, vbios_version, serial, compute_cap\n", 1, "index", `"index" is not an index`},
		{"bad memory", ok + ok + "2, Tesla T4, GPU-y, 515.105.01, 15 GB, 00000000:00:1F.0, x, y, 7.5\n", 3, "memory.total", `"15 GB" is not a size in MiB`},
		{"error message", "No devices were found\n", 1, "", "1 fields, want 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := harness.ParseGPUQueryCSV([]byte(tc.in))
			var fe *harness.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FileError", err)
			}
			if fe.Line != tc.line || fe.Field != tc.field {
				t.Errorf("%v: at line %d field %q, want line %d field %q", err, fe.Line, fe.Field, tc.line, tc.field)
			}
			if !errors.Is(err, harness.ErrNvidiaSmiOutput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want ErrNvidiaSmiOutput and %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf(":%d", tc.line)) {
				t.Errorf("%q does not name line %d", err, tc.line)
			}
		})
	}
}

func TestParseNvidiaSmiVersion(t *testing.T) {
	// A driver whose --version has no CUDA line still yields the driver.
	v, err := harness.ParseNvidiaSmiVersion([]byte("NVIDIA-SMI version  : 520.61.05\nNVML version        : 520.61\nDRIVER version      : 520.61.05\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (harness.NvidiaSmiVersion{NvidiaSmi: "520.61.05", NVML: "520.61", DriverVersion: "520.61.05"}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	// A banner from a driver without CUDA.
	v, err = harness.ParseNvidiaSmiVersion([]byte("| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: N/A      |\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (harness.NvidiaSmiVersion{NvidiaSmi: "470.82.01", DriverVersion: "470.82.01"}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	for _, bad := range []string{"", "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"} {
		if _, err := harness.ParseNvidiaSmiVersion([]byte(bad)); !errors.Is(err, harness.ErrNvidiaSmiOutput) {
			t.Errorf("%q: got %v, want ErrNvidiaSmiOutput", bad, err)
		}
	}
}

func TestMergeGPUs(t *testing.T) {
	x, err := harness.ParseNvidiaSmiXML(smiFixture(t, "telegraf-a100-sxm4-v12.xml"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := harness.ParseGPUQueryCSV([]byte(
		"3, NVIDIA A100-SXM4-80GB, GPU-513536b6-7d19-9063-b049-1e69664bb298, 535.54.03, 81920, 00000000:01:00.0, 92.00.36.00.02, 1650522003820, 8.0\n" +
			"4, NVIDIA A100-SXM4-80GB, GPU-613536b6-7d19-9063-b049-1e69664bb299, 535.54.03, 81920, 00000000:02:00.0, 92.00.36.00.02, 1650522003821, 8.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := harness.MergeGPUs(x, csv)
	want := []harness.GPU{
		{Index: 3, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-513536b6-7d19-9063-b049-1e69664bb298", Serial: "1650522003820",
			PCIBusID: "00000000:01:00.0", VBIOS: "92.00.36.00.02", DriverVersion: "535.54.03", CUDAVersion: "12.2",
			MemoryTotalMiB: 81920, ComputeCap: "8.0", Architecture: "Ampere", MIGMode: "Enabled"},
		// Only in the CSV: kept, with the machine's CUDA version from the XML.
		{Index: 4, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-613536b6-7d19-9063-b049-1e69664bb299", Serial: "1650522003821",
			PCIBusID: "00000000:02:00.0", VBIOS: "92.00.36.00.02", DriverVersion: "535.54.03", CUDAVersion: "12.2",
			MemoryTotalMiB: 81920, ComputeCap: "8.0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	if got := harness.MergeGPUs(harness.NvidiaSmi{}, csv); !reflect.DeepEqual(got, csv) {
		t.Errorf("CSV alone: got %+v", got)
	}
	if got := harness.MergeGPUs(x, nil); !reflect.DeepEqual(got, x.GPUs) {
		t.Errorf("XML alone: got %+v", got)
	}
}

// TestMergeGPUsMasked: masked captures print one all-zero UUID for every
// GPU, so GPUs must be paired by bus id, not by that UUID.
func TestMergeGPUsMasked(t *testing.T) {
	const zero = "GPU-00000000-0000-0000-0000-000000000000"
	x := harness.NvidiaSmi{DriverVersion: "590.48.01", CUDAVersion: "13.1", GPUs: []harness.GPU{
		{Index: 0, Name: "NVIDIA H200", UUID: zero, PCIBusID: "00000000:1B:00.0", MemoryTotalMiB: 143771, DriverVersion: "590.48.01", CUDAVersion: "13.1"},
		{Index: 1, Name: "NVIDIA H200", UUID: zero, PCIBusID: "00000000:83:00.0", MemoryTotalMiB: 143771, DriverVersion: "590.48.01", CUDAVersion: "13.1"},
	}}
	csv := []harness.GPU{ // in another order, with sysfs-style bus ids
		{Index: 1, Name: "NVIDIA H200", UUID: zero, PCIBusID: "0000:83:00.0", ComputeCap: "9.0"},
		{Index: 0, Name: "NVIDIA H200", UUID: zero, PCIBusID: "0000:1b:00.0", ComputeCap: "9.1"},
	}
	got := harness.MergeGPUs(x, csv)
	if len(got) != 2 || got[0].PCIBusID != "00000000:1B:00.0" || got[0].ComputeCap != "9.1" ||
		got[1].PCIBusID != "00000000:83:00.0" || got[1].ComputeCap != "9.0" {
		t.Errorf("got %+v", got)
	}

	// Real UUIDs pair GPUs whatever the order, when the CSV lacks bus ids.
	const u1, u2 = "GPU-11111111-2222-3333-4444-555555555555", "GPU-66666666-2222-3333-4444-555555555555"
	x = harness.NvidiaSmi{GPUs: []harness.GPU{{Index: 0, UUID: u1, PCIBusID: "00000000:01:00.0"}, {Index: 1, UUID: u2, PCIBusID: "00000000:02:00.0"}}}
	csv = []harness.GPU{{Index: 1, UUID: u2, ComputeCap: "8.0"}, {Index: 0, UUID: u1, ComputeCap: "8.6"}}
	got = harness.MergeGPUs(x, csv)
	if len(got) != 2 || got[0].UUID != u1 || got[0].ComputeCap != "8.6" || got[1].UUID != u2 || got[1].ComputeCap != "8.0" {
		t.Errorf("by UUID: got %+v", got)
	}

	// Real UUIDs that differ are different GPUs, even at the same position.
	a := harness.NvidiaSmi{GPUs: []harness.GPU{{Index: 0, UUID: u1}}}
	b := []harness.GPU{{Index: 0, UUID: u2, ComputeCap: "8.9"}}
	if got := harness.MergeGPUs(a, b); len(got) != 2 {
		t.Errorf("different GPUs were merged: %+v", got)
	}
}

// The CSV nvidia-smi prints for GPUQueryFields, one GPU a line; unavailable
// values are empty.
func ExampleParseGPUQueryCSV() {
	out := []byte(`0, NVIDIA H200, GPU-5f1c2d3e-0a1b-4c5d-8e9f-0123456789ab, 590.48.01, 143771, 00000000:83:00.0, 96.00.A5.00.03, 1652345678901, 9.0
1, NVIDIA H200, GPU-6a7b8c9d-0a1b-4c5d-8e9f-0123456789ac, 590.48.01, 143771, 00000000:84:00.0, 96.00.A5.00.03, [N/A], 9.0
`)
	gpus, err := harness.ParseGPUQueryCSV(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range gpus {
		fmt.Printf("%d %s %s %d MiB sm_%s serial=%q\n", g.Index, g.Name, g.UUID, g.MemoryTotalMiB, g.ComputeCap, g.Serial)
	}
	_, err = harness.ParseGPUQueryCSV([]byte("0, NVIDIA H200, GPU-5f1c2d3e\n"))
	fmt.Println(err)
	// Output:
	// 0 NVIDIA H200 GPU-5f1c2d3e-0a1b-4c5d-8e9f-0123456789ab 143771 MiB sm_9.0 serial="1652345678901"
	// 1 NVIDIA H200 GPU-6a7b8c9d-0a1b-4c5d-8e9f-0123456789ac 143771 MiB sm_9.0 serial=""
	// nvidia-smi --query-gpu:1: unrecognised nvidia-smi output: 3 fields, want 9 (index,name,uuid,driver_version,memory.total,pci.bus_id,vbios_version,serial,compute_cap)
}
