package cn.hyperchain.core;

import java.nio.charset.StandardCharsets;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import keel.jvm.Host;
import keel.jvm.SortedKeys;

/**
 * Hyperchain HVM's ledger table: rows, each of column families, each of columns, a String value
 * per (row, column family, column). Keel's own implementation of Hyperchain's API (docs/jvm.md
 * §10, from HVM's "contract ledger data structures" manual), as a {@code @StoreField} field of
 * the main class; the table's name is the field's.
 *
 * Ledger layout for the field `t`: the value under `t@row@family@column`; the rows, sorted by
 * name followed by '@' (HVM's order), in the sorted set `t#rows`; a row's families likewise in
 * `t#fams@row`; a family's columns, sorted by name, in `t#cols@row@family` (keel.jvm.SortedKeys).
 * Every access is a ledger access: metered, and undone with a call that fails. Names and values
 * may be neither null nor empty, and names may not contain '@'. Iterating rows, families or columns
 * while the table changes throws ConcurrentModificationException (HVM's fail-fast iterators).
 */
public class HyperTable {
  private static final char SEP = '@';

  private String name;
  /** changes made through this object, for the fail-fast iterators */
  private int changes;

  public HyperTable() {}

  // ---- for the engine (cn.hyperchain.core.Stores) ----

  void bind(String field) {
    this.name = field;
  }

  // ---- layout ----

  private String bound() {
    if (name == null)
      throw new IllegalStateException("a HyperTable keeps its data in the ledger: use it as a @StoreField field of the main class");
    return name;
  }

  private static String checked(String what, String text) {
    if (text == null || text.isEmpty()) throw new IllegalArgumentException("a HyperTable " + what + " may be neither null nor empty");
    if (text.indexOf(SEP) >= 0) throw new IllegalArgumentException("a HyperTable " + what + " may not contain '@': " + text);
    return text;
  }

  private String valueKey(String row, String family, String column) {
    return bound() + SEP + checked("row name", row) + SEP + checked("column family name", family) + SEP + checked("column name", column);
  }

  private SortedKeys rowIndex() {
    return new SortedKeys(bound() + "#rows");
  }

  private SortedKeys familyIndex(String row) {
    return new SortedKeys(bound() + "#fams" + SEP + row);
  }

  private SortedKeys columnIndex(String row, String family) {
    return new SortedKeys(bound() + "#cols" + SEP + row + SEP + family);
  }

  private static String withoutSep(String key) {
    return key.substring(0, key.length() - 1);
  }

  // ---- the table ----

  public void put(String rowName, String colFamName, String colName, String value) {
    String key = valueKey(rowName, colFamName, colName);
    if (value == null || value.isEmpty()) throw new IllegalArgumentException("a HyperTable value may be neither null nor empty");
    boolean existed = Host.get(key) != null;
    Host.put(key, value.getBytes(StandardCharsets.UTF_8));
    if (existed) return;
    changes++;
    SortedKeys columns = columnIndex(rowName, colFamName);
    boolean newFamily = columns.isEmpty();
    columns.add(colName);
    if (!newFamily) return;
    SortedKeys families = familyIndex(rowName);
    boolean newRow = families.isEmpty();
    families.add(colFamName + SEP);
    if (newRow) rowIndex().add(rowName + SEP);
  }

  /** The value, or null. */
  public String get(String rowName, String colFamName, String colName) {
    byte[] v = Host.get(valueKey(rowName, colFamName, colName));
    return v == null ? null : new String(v, StandardCharsets.UTF_8);
  }

  /** Removes the value; nothing happens when there is none. */
  public void remove(String rowName, String colFamName, String colName) {
    String key = valueKey(rowName, colFamName, colName);
    if (Host.get(key) == null) return;
    Host.put(key, null);
    changes++;
    SortedKeys columns = columnIndex(rowName, colFamName);
    columns.remove(colName);
    if (!columns.isEmpty()) return;
    SortedKeys families = familyIndex(rowName);
    families.remove(colFamName + SEP);
    if (families.isEmpty()) rowIndex().remove(rowName + SEP);
  }

  /** Removes the row with all its column families and columns; nothing happens when there is none. */
  public void removeRow(String rowName) {
    checked("row name", rowName);
    SortedKeys families = familyIndex(rowName);
    for (String familyKey : families.range(null, null)) {
      String family = withoutSep(familyKey);
      SortedKeys columns = columnIndex(rowName, family);
      for (String column : columns.range(null, null)) {
        Host.put(valueKey(rowName, family, column), null);
        columns.remove(column);
      }
      families.remove(familyKey);
      changes++;
    }
    rowIndex().remove(rowName + SEP);
  }

  public boolean containsKey(String rowName, String colFamName, String colName) {
    return Host.get(valueKey(rowName, colFamName, colName)) != null;
  }

  public boolean containsRow(String rowName) {
    return !familyIndex(checked("row name", rowName)).isEmpty();
  }

  boolean containsFamily(String rowName, String colFamName) {
    return !columnIndex(checked("row name", rowName), checked("column family name", colFamName)).isEmpty();
  }

  /** A row of this table by name (it need not exist yet). */
  public Row getRow(String rowName) {
    return new Row(this, checked("row name", rowName));
  }

  /** The table's name: its field's. */
  public String getName() {
    return bound();
  }

  /** The rows' names, in the order of name + '@' (so "t1", "t2" come before "t"). */
  public RowSet rows() {
    return new RowSet(this, null);
  }

  /** The rows from `rowName` on (or from the first row after it, when there is none of that name); an exception when no row follows. */
  public RowSet seekRows(String rowName) {
    checked("row name", rowName);
    if (rowIndex().range(rowName + SEP, null).isEmpty()) throw new IllegalArgumentException("no row of the HyperTable " + bound() + " is at or after " + rowName);
    return new RowSet(this, rowName + SEP);
  }

  /** The column families of a row (none when the row does not exist), in the order of name + '@'. */
  public ColFamSet colFams(String rowName) {
    return new ColFamSet(this, checked("row name", rowName));
  }

  /** The columns of a row's column family (none when it does not exist), in the order of their names. */
  public ColSet cols(String rowName, String colFamName) {
    return new ColSet(this, checked("row name", rowName), checked("column family name", colFamName));
  }

  /** The names an index holds, read now, handed out by an iterator that fails once the table changed. */
  private Iterator<String> names(List<String> keys, boolean stripSep) {
    int expected = changes;
    Iterator<String> it = keys.iterator();
    return new Iterator<String>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public String next() {
        if (changes != expected) throw new ConcurrentModificationException("the HyperTable " + name + " changed during the iteration");
        if (!it.hasNext()) throw new NoSuchElementException();
        String k = it.next();
        return stripSep ? withoutSep(k) : k;
      }
    };
  }

  public static final class RowSet implements Iterable<String> {
    private final HyperTable table;
    private final String from;

    RowSet(HyperTable table, String from) {
      this.table = table;
      this.from = from;
    }

    @Override
    public Iterator<String> iterator() {
      return table.names(table.rowIndex().range(from, null), true);
    }
  }

  public static final class ColFamSet implements Iterable<String> {
    private final HyperTable table;
    private final String row;

    ColFamSet(HyperTable table, String row) {
      this.table = table;
      this.row = row;
    }

    @Override
    public Iterator<String> iterator() {
      return table.names(table.familyIndex(row).range(null, null), true);
    }
  }

  public static final class ColSet implements Iterable<String> {
    private final HyperTable table;
    private final String row;
    private final String family;

    ColSet(HyperTable table, String row, String family) {
      this.table = table;
      this.row = row;
      this.family = family;
    }

    @Override
    public Iterator<String> iterator() {
      return table.names(table.columnIndex(row, family).range(null, null), false);
    }
  }

  /** A row of a table: what the table does, with the row name given. */
  public static final class Row {
    private final HyperTable table;
    private final String name;

    Row(HyperTable table, String name) {
      this.table = table;
      this.name = name;
    }

    public void put(String colFamName, String colName, String value) {
      table.put(name, colFamName, colName, value);
    }

    public String get(String colFamName, String colName) {
      return table.get(name, colFamName, colName);
    }

    public void remove(String colFamName, String colName) {
      table.remove(name, colFamName, colName);
    }

    public boolean containsKey(String colFamName, String colName) {
      return table.containsKey(name, colFamName, colName);
    }

    public boolean containsColFam(String colFamName) {
      return table.containsFamily(name, colFamName);
    }

    public HyperTable getTable() {
      return table;
    }

    /** A column family of this row by name (it need not exist yet). */
    public ColumnFamily getColFam(String colFamName) {
      return new ColumnFamily(this, checked("column family name", colFamName));
    }

    public String getName() {
      return name;
    }
  }

  /** A column family of a row: what the row does, with the family name given. */
  public static final class ColumnFamily {
    private Row row;
    private final String name;

    ColumnFamily(Row row, String name) {
      this.row = row;
      this.name = name;
    }

    public void put(String colName, String value) {
      row.put(name, colName, value);
    }

    public String get(String colName) {
      return row.get(name, colName);
    }

    public void remove(String colName) {
      row.remove(name, colName);
    }

    public boolean containsKey(String colName) {
      return row.containsKey(name, colName);
    }

    public Row getRow() {
      return row;
    }

    /** Moves this family to another row of the same table (another table's row is refused, as in HVM). */
    public void setRow(Row other) {
      if (other == null || other.getTable() != row.getTable()) throw new IllegalArgumentException("a column family moves only to a row of its own table");
      this.row = other;
    }

    public String getName() {
      return name;
    }
  }
}
