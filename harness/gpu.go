package harness

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// GPUQueryFields is the --query-gpu field list ParseGPUQueryCSV reads, in
// this order. nvidia-smi prints CSV columns in the order they were asked
// for and without a header under noheader, so the order is the format:
//
//	nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,pci.bus_id,vbios_version,serial,compute_cap --format=csv,noheader,nounits
//
// There is no CUDA-version field in --query-gpu; the CUDA version comes
// from -q -x or --version (see MergeGPUs).
const GPUQueryFields = "index,name,uuid,driver_version,memory.total,pci.bus_id,vbios_version,serial,compute_cap"

// GPU is one GPU as nvidia-smi reported it inside the job. Identifiers are
// kept exactly as printed, including the all-zero UUIDs and serials or
// "REDACTED" that some tools write when they mask a capture; values
// nvidia-smi reports as unavailable ("N/A", "[N/A]", "[Not Supported]") are
// empty.
type GPU struct {
	// Index is nvidia-smi's index (PCI bus order). CUDA numbers devices
	// the same way only under CUDA_DEVICE_ORDER=PCI_BUS_ID, which is why
	// the UUID, not the index, identifies a GPU.
	Index          int    `json:"index"`
	Name           string `json:"name"`
	UUID           string `json:"uuid"`
	Serial         string `json:"serial,omitempty"`
	PCIBusID       string `json:"pci_bus_id,omitempty"`
	VBIOS          string `json:"vbios_version,omitempty"`
	DriverVersion  string `json:"driver_version,omitempty"`
	CUDAVersion    string `json:"cuda_version,omitempty"` // the newest CUDA the driver supports, not the toolkit PyTorch was built with
	MemoryTotalMiB int    `json:"memory_total_mib,omitempty"`
	ComputeCap     string `json:"compute_cap,omitempty"`  // "9.0"; only --query-gpu reports it
	Architecture   string `json:"architecture,omitempty"` // "Hopper"; only -q -x reports it
	// MIGMode is the current MIG mode ("Enabled", "Disabled") where the
	// GPU supports MIG; when enabled, CUDA sees MIG slices, not this GPU.
	MIGMode string `json:"mig_mode,omitempty"`
}

// NvidiaSmi is what `nvidia-smi -q -x` says about the machine.
type NvidiaSmi struct {
	DriverVersion string `json:"driver_version"`
	CUDAVersion   string `json:"cuda_version"`
	// AttachedGPUs is the count nvidia-smi printed. It can differ from
	// len(GPUs): trimmed captures keep fewer <gpu> elements than they say.
	AttachedGPUs int   `json:"attached_gpus"`
	GPUs         []GPU `json:"gpus"`
}

// smiLog holds the few parts of `nvidia-smi -q -x` provenance needs;
// encoding/xml skips every other element, which is what keeps one struct
// working across the DTD versions (v11, v12, v13 seen so far).
type smiLog struct {
	XMLName       xml.Name `xml:"nvidia_smi_log"`
	DriverVersion string   `xml:"driver_version"`
	CUDAVersion   string   `xml:"cuda_version"`
	AttachedGPUs  string   `xml:"attached_gpus"`
	GPUs          []smiGPU `xml:"gpu"`
}

type smiGPU struct {
	ID           string `xml:"id,attr"`
	ProductName  string `xml:"product_name"`
	Architecture string `xml:"product_architecture"`
	UUID         string `xml:"uuid"`
	Serial       string `xml:"serial"`
	VBIOS        string `xml:"vbios_version"`
	PCIBusID     string `xml:"pci>pci_bus_id"`
	// A direct child path, so the fb_memory_usage of each MIG device
	// (nested under mig_devices) is not read as the GPU's.
	MemoryTotal string `xml:"fb_memory_usage>total"`
	MIGMode     string `xml:"mig_mode>current_mig"`
}

const (
	srcXML     = "nvidia-smi -q -x"
	srcCSV     = "nvidia-smi --query-gpu"
	srcVersion = "nvidia-smi --version"
)

// ParseNvidiaSmiXML parses the output of `nvidia-smi -q -x`. Unknown
// elements are ignored and unavailable values become empty, so new driver
// releases, which add elements with every DTD version, keep parsing.
// Each GPU carries the log's driver and CUDA versions, and its Index is its
// position in the document (nvidia-smi lists GPUs in index order).
func ParseNvidiaSmiXML(b []byte) (NvidiaSmi, error) {
	var log smiLog
	if err := xml.Unmarshal(b, &log); err != nil {
		fe := &FileError{Path: srcXML, Err: fmt.Errorf("%w: %v", ErrNvidiaSmiOutput, err)}
		var se *xml.SyntaxError
		switch {
		case errors.As(err, &se):
			fe.Line, fe.Err = se.Line, fmt.Errorf("%w: %s", ErrNvidiaSmiOutput, se.Msg)
		case errors.Is(err, io.EOF):
			fe.Err = fmt.Errorf("%w: no XML element", ErrNvidiaSmiOutput)
		}
		return NvidiaSmi{}, fe
	}
	out := NvidiaSmi{
		DriverVersion: smiValue(log.DriverVersion),
		CUDAVersion:   smiValue(log.CUDAVersion),
	}
	if v := smiValue(log.AttachedGPUs); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return NvidiaSmi{}, &FileError{Path: srcXML, Field: "attached_gpus",
				Err: fmt.Errorf("%w: %q is not a count", ErrNvidiaSmiOutput, v)}
		}
		out.AttachedGPUs = n
	}
	for i, g := range log.GPUs {
		mem, err := parseMiB(g.MemoryTotal)
		if err != nil {
			return NvidiaSmi{}, &FileError{Path: srcXML,
				Field: fmt.Sprintf("gpu[%d] (%s) fb_memory_usage/total", i, g.ID), Err: err}
		}
		bus := smiValue(g.PCIBusID)
		if bus == "" {
			bus = smiValue(g.ID) // the id attribute is the bus id in every schema seen
		}
		out.GPUs = append(out.GPUs, GPU{
			Index:          i,
			Name:           smiValue(g.ProductName),
			UUID:           smiValue(g.UUID),
			Serial:         smiValue(g.Serial),
			PCIBusID:       bus,
			VBIOS:          smiValue(g.VBIOS),
			DriverVersion:  out.DriverVersion,
			CUDAVersion:    out.CUDAVersion,
			MemoryTotalMiB: mem,
			Architecture:   smiValue(g.Architecture),
			MIGMode:        smiValue(g.MIGMode),
		})
	}
	return out, nil
}

// ParseGPUQueryCSV parses the output of
//
//	nvidia-smi --query-gpu=<GPUQueryFields> --format=csv,noheader,nounits
//
// one GPU a line. Fields are trimmed, "[N/A]" and similar placeholders
// become empty, and a memory total still carrying its " MiB" unit is
// accepted. An error names the line and field; a line with the wrong
// number of fields is an error rather than a guess, because nvidia-smi does
// not quote values and a shifted column would put a UUID in the wrong
// field silently.
func ParseGPUQueryCSV(b []byte) ([]GPU, error) {
	const nFields = 9
	var gpus []GPU
	for n, line := range bytes.Split(b, []byte("\n")) {
		text := strings.TrimSpace(string(line))
		if text == "" {
			continue
		}
		lineErr := func(field string, err error) error {
			return &FileError{Path: srcCSV, Line: n + 1, Field: field, Err: err}
		}
		f := strings.Split(text, ",")
		if len(f) != nFields {
			return nil, lineErr("", fmt.Errorf("%w: %d fields, want %d (%s)", ErrNvidiaSmiOutput, len(f), nFields, GPUQueryFields))
		}
		for i := range f {
			f[i] = smiValue(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil || idx < 0 {
			return nil, lineErr("index", fmt.Errorf("%w: %q is not an index", ErrNvidiaSmiOutput, f[0]))
		}
		mem, err := parseMiB(f[4])
		if err != nil {
			return nil, lineErr("memory.total", err)
		}
		gpus = append(gpus, GPU{
			Index:          idx,
			Name:           f[1],
			UUID:           f[2],
			DriverVersion:  f[3],
			MemoryTotalMiB: mem,
			PCIBusID:       f[5],
			VBIOS:          f[6],
			Serial:         f[7],
			ComputeCap:     f[8],
		})
	}
	return gpus, nil
}

// NvidiaSmiVersion is what `nvidia-smi --version` reports.
type NvidiaSmiVersion struct {
	NvidiaSmi     string `json:"nvidia_smi"`
	NVML          string `json:"nvml,omitempty"`
	DriverVersion string `json:"driver_version"`
	CUDAVersion   string `json:"cuda_version"`
}

var (
	reSmiVersion    = regexp.MustCompile(`(?im)^\s*NVIDIA-SMI version\s*:\s*(\S+)`)
	reSmiBanner     = regexp.MustCompile(`(?m)^\|?\s*NVIDIA-SMI\s+([0-9][^\s|]*)`)
	reNVMLVersion   = regexp.MustCompile(`(?i)\bNVML version\s*:\s*([^\s|]+)`)
	reDriverVersion = regexp.MustCompile(`(?i)\bDriver Version\s*:\s*([^\s|]+)`)
	reCUDAVersion   = regexp.MustCompile(`(?i)\bCUDA Version\s*:\s*([^\s|]+)`)
)

// ParseNvidiaSmiVersion reads the driver and CUDA versions from the output
// of `nvidia-smi --version` ("DRIVER version : 590.48.01", "CUDA Version :
// 13.1"). It also accepts the banner of plain `nvidia-smi` and the header
// of `nvidia-smi -q`, which carry the same two values, because drivers
// older than --version still print those. The first occurrence of each key
// wins. It is an error when neither version is found.
func ParseNvidiaSmiVersion(b []byte) (NvidiaSmiVersion, error) {
	first := func(re *regexp.Regexp) string {
		if m := re.FindSubmatch(b); m != nil {
			return smiValue(string(m[1]))
		}
		return ""
	}
	v := NvidiaSmiVersion{
		NvidiaSmi:     first(reSmiVersion),
		NVML:          first(reNVMLVersion),
		DriverVersion: first(reDriverVersion),
		CUDAVersion:   first(reCUDAVersion),
	}
	if v.NvidiaSmi == "" {
		v.NvidiaSmi = first(reSmiBanner)
	}
	if v.DriverVersion == "" && v.CUDAVersion == "" {
		return NvidiaSmiVersion{}, &FileError{Path: srcVersion,
			Err: fmt.Errorf("%w: no driver or CUDA version", ErrNvidiaSmiOutput)}
	}
	return v, nil
}

// MergeGPUs combines what `nvidia-smi -q -x` and the --query-gpu CSV say
// about the same GPUs: the CSV alone has the compute capability and the
// explicit index, the XML alone has the CUDA version, architecture and MIG
// mode. GPUs are paired by UUID where UUIDs are real and distinct, else by
// PCI bus id, else by position when both list as many GPUs; masked
// captures print the same all-zero UUID for every GPU, so pairing on it
// would mix GPUs up. Two GPUs whose real UUIDs or bus ids differ are never
// paired. Where both sources have a value the XML's is kept, except the
// index. The result is ordered by index; a GPU found in only one source is
// kept as it is, with the XML's driver and CUDA versions where it has none.
func MergeGPUs(x NvidiaSmi, csv []GPU) []GPU {
	out := make([]GPU, 0, max(len(x.GPUs), len(csv)))
	used := make([]bool, len(csv))
	byUUID := uniqueIndex(csv, func(g GPU) string {
		if !realID(g.UUID) {
			return ""
		}
		return g.UUID
	})
	byBus := uniqueIndex(csv, func(g GPU) string { return normBusID(g.PCIBusID) })
	for i, g := range x.GPUs {
		j, ok := -1, false
		if realID(g.UUID) {
			j, ok = byUUID[g.UUID]
		}
		if !ok {
			j, ok = byBus[normBusID(g.PCIBusID)]
		}
		if !ok && len(x.GPUs) == len(csv) {
			j, ok = i, true
		}
		if ok && !used[j] && !differ(g, csv[j]) {
			used[j] = true
			g = fillGPU(g, csv[j])
			g.Index = csv[j].Index
		}
		out = append(out, g)
	}
	for j, g := range csv {
		if used[j] {
			continue
		}
		if g.CUDAVersion == "" {
			g.CUDAVersion = x.CUDAVersion
		}
		if g.DriverVersion == "" {
			g.DriverVersion = x.DriverVersion
		}
		out = append(out, g)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out
}

// differ reports whether a and b are certainly different GPUs: both have
// real UUIDs that differ, or both have bus ids that differ.
func differ(a, b GPU) bool {
	if realID(a.UUID) && realID(b.UUID) && a.UUID != b.UUID {
		return true
	}
	return a.PCIBusID != "" && b.PCIBusID != "" && normBusID(a.PCIBusID) != normBusID(b.PCIBusID)
}

// fillGPU returns g with its empty fields taken from o.
func fillGPU(g, o GPU) GPU {
	for _, p := range []struct{ dst, src *string }{
		{&g.Name, &o.Name}, {&g.UUID, &o.UUID}, {&g.Serial, &o.Serial},
		{&g.PCIBusID, &o.PCIBusID}, {&g.VBIOS, &o.VBIOS},
		{&g.DriverVersion, &o.DriverVersion}, {&g.CUDAVersion, &o.CUDAVersion},
		{&g.ComputeCap, &o.ComputeCap}, {&g.Architecture, &o.Architecture},
		{&g.MIGMode, &o.MIGMode},
	} {
		if *p.dst == "" {
			*p.dst = *p.src
		}
	}
	if g.MemoryTotalMiB == 0 {
		g.MemoryTotalMiB = o.MemoryTotalMiB
	}
	return g
}

// uniqueIndex maps key(g) to g's position for keys that occur once and are
// not empty; a key seen twice identifies nothing.
func uniqueIndex(gpus []GPU, key func(GPU) string) map[string]int {
	m := make(map[string]int, len(gpus))
	dup := map[string]bool{}
	for i, g := range gpus {
		k := key(g)
		if k == "" {
			continue
		}
		if _, seen := m[k]; seen {
			dup[k] = true
		}
		m[k] = i
	}
	for k := range dup {
		delete(m, k)
	}
	return m
}

// realID reports whether an identifier could tell GPUs apart: not empty,
// not "REDACTED", not all zeros as masking tools (and boards without a
// serial) print.
func realID(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "GPU-"), "MIG-")
	if s == "" || strings.EqualFold(s, "REDACTED") {
		return false
	}
	return strings.Trim(s, "0-") != ""
}

// normBusID makes "00000000:01:00.0" (nvidia-smi) and "0000:01:00.0"
// (sysfs, lspci -D) compare equal.
func normBusID(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || strings.Count(rest, ":") != 1 {
		return s
	}
	dom = strings.TrimLeft(dom, "0")
	return dom + ":" + rest
}

// smiValue trims v and maps nvidia-smi's "no value" spellings to "".
func smiValue(v string) string {
	v = strings.TrimSpace(v)
	inner := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	switch strings.ToLower(inner) {
	case "n/a", "not supported", "unknown error", "insufficient permissions",
		"requested functionality has been deprecated", "gpu requires reset", "gpu is lost":
		return ""
	}
	return v
}

// parseMiB reads "81920 MiB" (or "81920" under nounits); unavailable is 0.
func parseMiB(v string) (int, error) {
	v = smiValue(v)
	if v == "" {
		return 0, nil
	}
	num := strings.TrimSpace(strings.TrimSuffix(v, "MiB"))
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q is not a size in MiB", ErrNvidiaSmiOutput, v)
	}
	return n, nil
}
