window.rulesdslPreviews("mini/setting.html", {});
