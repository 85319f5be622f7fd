package history

import "database/sql"

// ExecForTest runs a statement on the index's database (tests damage it).
func ExecForTest(x *Index, q string) (sql.Result, error) { return x.db.Exec(q) }
