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
                stored.idsByMarker.computeIfAbsent(rs.getString(2), k -> new ArrayList<>()).add(id);
            }
        }
        return stored;
    }

    int rows() {
        return writeIds.size();
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
        assertThat(lost).as("writes confirmed durable but missing from the store (%d of %d confirmed)", lost.size(),
                confirmed.size()).isEmpty();

        Map<String, List<String>> doubled = new TreeMap<>();
        idsByMarker.forEach((marker, ids) -> {
            if (ids.size() > 1) {
                doubled.put(marker + " (" + whose.apply(marker) + ")", ids);
            }
        });
        assertThat(doubled).as("writes stored more than once, with the write ids of their rows").isEmpty();

        Map<String, Integer> idCounts = new TreeMap<>();
        writeIds.forEach(id -> idCounts.merge(id, 1, Integer::sum));
        idCounts.values().removeIf(n -> n == 1);
        assertThat(idCounts).as("write ids stored more than once, with their counts").isEmpty();

        List<String> foreign = idsByMarker.keySet().stream().filter(m -> !markerForm.matcher(m).matches()).sorted()
                .toList();
        assertThat(foreign).as("stored user contents no child wrote (half-read records?)").isEmpty();
    }
}
