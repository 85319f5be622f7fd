package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
	sqlite3 "modernc.org/sqlite/lib"
)

// SchemaVersion is the index's schema version, kept in SQLite's
// user_version. An index of another version is rebuilt.
const SchemaVersion = 1

// DefaultIndexName is the index's file name in the user's cache folder
// (os.UserCacheDir()/evalcapsule/history.db).
const DefaultIndexName = "history.db"

const schema = `
CREATE TABLE checkpoints (
	id       INTEGER PRIMARY KEY,
	digest   TEXT NOT NULL UNIQUE,
	created  TEXT NOT NULL,
	model    TEXT NOT NULL,
	identity TEXT NOT NULL
);
-- Every name a checkpoint was read under: a registry tag (repo + tag)
-- or a local folder or tar (repo ""). A tag moved to another manifest
-- points at that one's row.
CREATE TABLE refs (
	ref        TEXT PRIMARY KEY,
	repo       TEXT NOT NULL,
	name       TEXT NOT NULL,
	checkpoint INTEGER NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE
);
CREATE INDEX refs_repo ON refs(repo);
CREATE TABLE scores (
	checkpoint INTEGER NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
	task    TEXT NOT NULL,
	metric  TEXT NOT NULL,
	filter  TEXT NOT NULL,
	value   REAL,
	ci_low  REAL,
	ci_high REAL,
	higher  INTEGER NOT NULL,
	docs    BLOB NOT NULL,
	PRIMARY KEY (checkpoint, task, metric, filter)
);
`

// Index is the local index of checkpoints: an SQLite database that is a
// cache of the capsules it was filled from.
type Index struct {
	db   *sql.DB
	path string
	// Rebuilt says why the index found at Open was deleted and made anew
	// (another schema version, a failed integrity check), "" when it was
	// used as it was or did not exist.
	Rebuilt string
}

// OpenIndex opens the index at path, creating it (and its folder) when
// there is none. An index of another schema version, or one that fails
// SQLite's quick_check, is deleted and created empty, and Rebuilt says
// why: the caller fills it again from the capsules.
func OpenIndex(ctx context.Context, path string) (*Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	x, err := openDB(ctx, path)
	if err == nil {
		return x, nil
	}
	if !errors.Is(err, ErrIndex) {
		return nil, err
	}
	reason := err.Error()
	if err := removeDB(path); err != nil {
		return nil, fmt.Errorf("index %s: removing it to rebuild it (%s): %w", path, reason, err)
	}
	x, err = openDB(ctx, path)
	if err != nil {
		return nil, err
	}
	x.Rebuilt = reason
	return x, nil
}

// Path is the index's file.
func (x *Index) Path() string { return x.path }

// Close closes the database.
func (x *Index) Close() error { return x.db.Close() }

// removeDB removes the database and the files SQLite keeps beside it.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func openDB(ctx context.Context, path string) (*Index, error) {
	// busy_timeout: two commands on the same index wait for each other
	// instead of failing; foreign_keys: deleting a checkpoint deletes its
	// rows.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	x := &Index{db: db, path: path}
	if err := x.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return x, nil
}

// check creates the schema in an empty database, and refuses one of
// another version or that fails quick_check (ErrIndex).
func (x *Index) check(ctx context.Context) error {
	var version int
	if err := x.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return x.unreadable(err)
	}
	var tables int
	if err := x.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return x.unreadable(err)
	}
	if tables == 0 && version == 0 {
		tx, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("index %s: %w", x.path, err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return fmt.Errorf("index %s: creating the schema: %w", x.path, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
			return fmt.Errorf("index %s: %w", x.path, err)
		}
		return tx.Commit()
	}
	if version != SchemaVersion {
		return fmt.Errorf("%w: %s has schema version %d, this program uses %d", ErrIndex, x.path, version, SchemaVersion)
	}
	var ok string
	if err := x.db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&ok); err != nil {
		return x.unreadable(err)
	}
	if ok != "ok" {
		return fmt.Errorf("%w: %s fails SQLite's integrity check: %s", ErrIndex, x.path, ok)
	}
	return nil
}

// unreadable classifies an error reading the database: a file that is
// not a database or is damaged is ErrIndex (rebuilt); anything else (a
// database another process holds locked past the busy timeout, a
// permission) is returned as it is, and the file left alone.
func (x *Index) unreadable(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %s is not an SQLite database or is damaged: %w", ErrIndex, x.path, err)
		}
	}
	return fmt.Errorf("index %s: %w", x.path, err)
}

// Reset empties the index (a rebuild): every checkpoint is read again
// from its capsule.
func (x *Index) Reset(ctx context.Context) error {
	_, err := x.db.ExecContext(ctx, "DELETE FROM checkpoints")
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	return nil
}

// Has reports whether the index holds the checkpoint of this manifest
// digest.
func (x *Index) Has(ctx context.Context, digest string) (bool, error) {
	var n int
	err := x.db.QueryRowContext(ctx, "SELECT count(*) FROM checkpoints WHERE digest = ?", digest).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("index %s: %w", x.path, err)
	}
	return n > 0, nil
}

// Link records that ref (in repo, under name) names the checkpoint of
// digest, which the index must hold.
func (x *Index) Link(ctx context.Context, ref, repo, name, digest string) error {
	_, err := x.db.ExecContext(ctx, `INSERT INTO refs(ref, repo, name, checkpoint)
		SELECT ?, ?, ?, id FROM checkpoints WHERE digest = ?
		ON CONFLICT(ref) DO UPDATE SET repo = excluded.repo, name = excluded.name, checkpoint = excluded.checkpoint`,
		ref, repo, name, digest)
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	return nil
}

// Put stores a checkpoint and links its Ref, in one transaction; a
// checkpoint of the same digest is replaced.
func (x *Index) Put(ctx context.Context, c *Checkpoint) error {
	id, err := json.Marshal(c.Identity)
	if err != nil {
		return err
	}
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM checkpoints WHERE digest = ?", c.Digest); err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	created := ""
	if !c.Created.IsZero() {
		created = c.Created.UTC().Format(time.RFC3339Nano)
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO checkpoints(digest, created, model, identity) VALUES (?, ?, ?, ?)",
		c.Digest, created, c.Model, string(id))
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	row, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO scores(checkpoint, task, metric, filter, value, ci_low, ci_high, higher, docs)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	defer stmt.Close()
	for _, s := range c.Scores {
		if _, err := stmt.ExecContext(ctx, row, s.Task, s.Metric, s.Filter, nullable(s.Value), nullable(s.Low), nullable(s.High),
			s.Higher, encodeValues(s.Docs, s.Values)); err != nil {
			return fmt.Errorf("index %s: %w", x.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO refs(ref, repo, name, checkpoint) VALUES (?, ?, ?, ?)
		ON CONFLICT(ref) DO UPDATE SET repo = excluded.repo, name = excluded.name, checkpoint = excluded.checkpoint`,
		c.Ref, c.Repo, c.Name, row); err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index %s: %w", x.path, err)
	}
	return nil
}

// nullable stores NaN as NULL (SQLite has no NaN).
func nullable(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

// Load reads the checkpoints refs name, in the order of refs, with their
// scores and per-document values. A ref the index does not hold is an
// error naming it; a row that does not decode is ErrIndex.
func (x *Index) Load(ctx context.Context, refs []string) ([]*Checkpoint, error) {
	out := make([]*Checkpoint, 0, len(refs))
	for _, ref := range refs {
		c, err := x.load(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (x *Index) load(ctx context.Context, ref string) (*Checkpoint, error) {
	c := &Checkpoint{Ref: ref, Step: -1}
	var id int64
	var created, identity string
	err := x.db.QueryRowContext(ctx, `SELECT c.id, c.digest, c.created, c.model, c.identity, r.repo, r.name
		FROM refs r JOIN checkpoints c ON c.id = r.checkpoint WHERE r.ref = ?`, ref).
		Scan(&id, &c.Digest, &created, &c.Model, &identity, &c.Repo, &c.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("index %s: %s is not indexed", x.path, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrIndex, x.path, ref, err)
	}
	if created != "" {
		if c.Created, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: created %q: %w", ErrIndex, x.path, ref, created, err)
		}
	}
	if err := json.Unmarshal([]byte(identity), &c.Identity); err != nil {
		return nil, fmt.Errorf("%w: %s: %s: identity: %w", ErrIndex, x.path, ref, err)
	}
	c.Step = ParseStep(c.Name, c.Model)
	rows, err := x.db.QueryContext(ctx, `SELECT task, metric, filter, value, ci_low, ci_high, higher, docs
		FROM scores WHERE checkpoint = ? ORDER BY task, metric, filter`, id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrIndex, x.path, ref, err)
	}
	defer rows.Close()
	for rows.Next() {
		s := &Score{}
		var value, low, high sql.NullFloat64
		var blob []byte
		if err := rows.Scan(&s.Task, &s.Metric, &s.Filter, &value, &low, &high, &s.Higher, &blob); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %w", ErrIndex, x.path, ref, err)
		}
		s.Value, s.Low, s.High = orNaN(value), orNaN(low), orNaN(high)
		if s.Docs, s.Values, err = decodeValues(blob); err != nil {
			return nil, fmt.Errorf("%s: %s: %s %s: %w", x.path, ref, s.Task, s.Key(), err)
		}
		c.Scores = append(c.Scores, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrIndex, x.path, ref, err)
	}
	return c, nil
}

func orNaN(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// Refs lists the refs the index holds for repo ("" for local capsules),
// sorted.
func (x *Index) Refs(ctx context.Context, repo string) ([]string, error) {
	rows, err := x.db.QueryContext(ctx, "SELECT ref FROM refs WHERE repo = ? ORDER BY ref", repo)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", x.path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrIndex, x.path, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
