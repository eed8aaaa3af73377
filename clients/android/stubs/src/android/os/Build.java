// Compile-time stub of android.os.Build: the SDK level only. Never shipped.
// https://developer.android.com/reference/android/os/Build.VERSION#SDK_INT
package android.os;

public class Build {
    public static class VERSION {
        public static final int SDK_INT = 0;
    }
}
