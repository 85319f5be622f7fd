package capsule

import (
	"os"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

// TestMain lists, after the tests, the parts outside Go they skipped for.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
