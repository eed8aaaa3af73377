// Compile-time stub of androidx.work.Operation (what enqueueing returns). Never shipped.
// https://developer.android.com/reference/androidx/work/Operation
package androidx.work;

public interface Operation {}
