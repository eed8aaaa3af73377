// Compile-time stub of android.content.SharedPreferences. Never shipped.
// https://developer.android.com/reference/android/content/SharedPreferences (getString, edit; Editor: putString, remove, commit)
package android.content;

public interface SharedPreferences {
    String getString(String key, String defValue);

    Editor edit();

    interface Editor {
        Editor putString(String key, String value);

        Editor remove(String key);

        boolean commit();
    }
}
