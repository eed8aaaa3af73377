// Compile-time stub of android.content.Context: only what the SecurePush adapters call. Never shipped.
// https://developer.android.com/reference/android/content/Context (getApplicationContext, getSharedPreferences, MODE_PRIVATE = 0)
package android.content;

public abstract class Context {
    public static final int MODE_PRIVATE = 0;

    public abstract Context getApplicationContext();

    public abstract SharedPreferences getSharedPreferences(String name, int mode);
}
