package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * What a crash test's store holds, read back with plain SQL from {@code <prefix>turns}: every row's
 * write id and user content (the children write each turn's marker as its user content), and the
 * checks every crash test makes of them. Each failed check names the writes it is about.
 */
final class StoredMarkers {

    /** Write id by row, in insertion order. */
    private final List<String> writeIds = new ArrayList<>();
    /** User content (marker) by row, in insertion order. */
    private final List<String> markers = new ArrayList<>();
    /** Write ids by user content (marker). */
    private final Map<String, List<String>> idsByMarker = new HashMap<>();

    private StoredMarkers() {}

    /** Reads every row of {@code <tablePrefix>turns}. */
    static StoredMarkers read(Connection c, String tablePrefix) throws SQLException {
        StoredMarkers stored = new StoredMarkers();
        try (PreparedStatement ps = c.prepareStatement("SELECT write_id, user_content FROM " + tablePrefix
                + "turns ORDER BY id"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String id = rs.getString(1);
                stored.writeIds.add(id);
                stored.markers.add(rs.getString(2));
                stored.idsByMarker.computeIfAbsent(rs.getString(2), k -> new ArrayList<>()).add(id);
            }
        }
        return stored;
    }

    /** {@return every row's marker, in insertion order} */
    List<String> markersInOrder() {
        return List.copyOf(markers);
    }

    int rows() {
        return writeIds.size();
    }

    /** {@return how many of {@code markers} are not stored} */
    long missing(Collection<String> markers) {
        return markers.stream().filter(m -> !idsByMarker.containsKey(m)).count();
    }

    /**
     * Checks that every confirmed write is stored exactly once, that no write (confirmed or not)
     * is stored twice under different ids, that write ids are unique, and that every row holds a
     * marker a child wrote ({@code markerForm}): nothing half-read from a torn record.
     *
     * @param confirmed every write a child confirmed durable, by marker
     * @param whose names where a marker came from, for the messages (e.g. its run and kill point)
     */
    void assertEveryConfirmedWriteStoredOnce(Collection<String> confirmed, Function<String, String> whose,
            Pattern markerForm) {
        List<String> lost = new ArrayList<>();
        for (String marker : confirmed) {
            if (!idsByMarker.containsKey(marker)) {
                lost.add(marker + " (" + whose.apply(marker) + ")");
            }
        }
        assertNone("writes confirmed durable (of " + confirmed.size() + ") but missing from the store", lost);

        Map<String, List<String>> doubled = new TreeMap<>();
        idsByMarker.forEach((marker, ids) -> {
            if (ids.size() > 1) {
                doubled.put(marker + " (" + whose.apply(marker) + ")", ids);
            }
        });
        assertNone("writes stored more than once, with the write ids of their rows",
                doubled.entrySet().stream().map(e -> e.getKey() + " as " + e.getValue()).toList());

        Map<String, Integer> idCounts = new TreeMap<>();
        writeIds.forEach(id -> idCounts.merge(id, 1, Integer::sum));
        idCounts.values().removeIf(n -> n == 1);
        assertNone("write ids stored more than once, with their counts",
                idCounts.entrySet().stream().map(e -> e.getKey() + " x" + e.getValue()).toList());

        List<String> foreign = idsByMarker.keySet().stream().filter(m -> !markerForm.matcher(m).matches()).sorted()
                .toList();
        assertNone("stored user contents no child wrote (half-read records?)", foreign);
    }

    /** Fails if {@code found} is not empty, naming how many and the first of them. */
    private static void assertNone(String what, List<String> found) {
        int shown = Math.min(found.size(), 20);
        assertThat(found).withFailMessage("%s: %d, the first %d: %s", what, found.size(), shown,
                found.subList(0, shown)).isEmpty();
    }
}
