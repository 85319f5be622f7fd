package gate

import (
	"os"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
